// Helpers for building wire messages in tests.
#pragma once

#include <bson/bson.h>

#include <memory>
#include <vector>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/op_msg.h"

namespace docguard::testing {

using BsonPtr = codec::OwnedBson;

inline BsonPtr json(const char* text) {
  bson_error_t error;
  bson_t* b = bson_new_from_json(reinterpret_cast<const uint8_t*>(text), -1, &error);
  if (b == nullptr) throw std::runtime_error(error.message);
  return BsonPtr(b);
}

inline codec::BsonView view(const BsonPtr& b) { return {bson_get_data(b.get()), b->len}; }

inline std::vector<uint8_t> op_msg(const char* body_json, int32_t request_id = 1,
                                   uint32_t flags = 0) {
  auto body = json(body_json);
  return codec::OpMsgBuilder(request_id, 0, flags).body(body.get()).finish();
}

}  // namespace docguard::testing
