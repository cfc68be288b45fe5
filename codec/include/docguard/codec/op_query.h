// Legacy OP_QUERY (handshakes only) and OP_REPLY.
#pragma once

#include <bson/bson.h>

#include <string_view>
#include <vector>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/message.h"

namespace docguard::codec {

struct OpQuery {
  MsgHeader header;
  int32_t flags = 0;
  std::string_view full_collection_name;  // e.g. "admin.$cmd"
  int32_t number_to_skip = 0;
  int32_t number_to_return = 0;
  BsonView query;
  BsonView return_fields_selector;  // may be empty

  static OpQuery parse(Bytes message);
};

struct OpReply {
  MsgHeader header;
  int32_t response_flags = 0;
  int64_t cursor_id = 0;
  int32_t starting_from = 0;
  int32_t number_returned = 0;
  std::vector<BsonView> documents;

  static OpReply parse(Bytes message);
};

// Builds an OP_REPLY carrying one document (how servers answer OP_QUERY commands).
std::vector<uint8_t> build_op_reply(int32_t request_id, int32_t response_to, Bytes document,
                                    int32_t response_flags = 0);

}  // namespace docguard::codec
