// The one builder of test messages for every layer's unit tests: BSON and OP_MSG requests and
// replies from Extended JSON.
#pragma once

#include <bson/bson.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/command_view.h"
#include "docguard/codec/op_msg.h"

namespace docguard::testing {

// Full validation with libbson (every element, recursively, UTF-8 included): what the codec's
// own structural check (codec::bson_structure_valid) is compared against.
inline bool bson_is_valid(const codec::BsonView& doc) {
  if (doc.empty()) return false;
  bson_t b;
  if (!bson_init_static(&b, doc.data, doc.size)) return false;
  size_t offset = 0;
  return bson_validate(&b, BSON_VALIDATE_NONE, &offset);
}

// An owned BSON document parsed from (relaxed) Extended JSON.
class Bson {
 public:
  explicit Bson(std::string_view json) {
    bson_error_t error;
    doc_ = bson_new_from_json(reinterpret_cast<const uint8_t*>(json.data()),
                              static_cast<ssize_t>(json.size()), &error);
    if (doc_ == nullptr) ADD_FAILURE() << "bad test JSON: " << error.message << " in " << json;
    if (doc_ == nullptr) doc_ = bson_new();
  }
  explicit Bson(const codec::BsonView& view) : doc_(bson_new_from_data(view.data, view.size)) {}
  Bson(const Bson&) = delete;
  Bson& operator=(const Bson&) = delete;
  ~Bson() { bson_destroy(doc_); }
  const bson_t* get() const { return doc_; }
  codec::BsonView view() const { return {bson_get_data(doc_), doc_->len}; }
  std::string json() const {
    char* s = bson_as_relaxed_extended_json(doc_, nullptr);
    std::string out(s);
    bson_free(s);
    return out;
  }

 private:
  bson_t* doc_;
};

// A parsed message with its bytes; the views stay valid while this object lives.
struct Message {
  std::vector<uint8_t> bytes;
  codec::OpMsg msg;
  codec::CommandView cmd;

  static std::unique_ptr<Message> parse(std::vector<uint8_t> bytes) {
    auto m = std::make_unique<Message>();
    m->bytes = std::move(bytes);
    m->msg = codec::OpMsg::parse(m->bytes);
    m->cmd = codec::describe(m->msg);
    return m;
  }
  Bson body() const { return Bson(msg.body); }
};

// A request: body JSON, optionally a kind-1 sequence of documents.
inline std::unique_ptr<Message> request(std::string_view body_json,
                                        std::string_view sequence_id = {},
                                        const std::vector<std::string>& sequence_json = {},
                                        uint32_t flags = 0, int32_t request_id = 42) {
  Bson body(body_json);
  codec::OpMsgBuilder builder(request_id, 0, flags);
  builder.body(body.get());
  std::vector<std::unique_ptr<Bson>> owned;
  if (!sequence_id.empty()) {
    std::vector<codec::BsonView> docs;
    for (const auto& j : sequence_json) {
      owned.push_back(std::make_unique<Bson>(j));
      docs.push_back(owned.back()->view());
    }
    builder.sequence(sequence_id, docs);
  }
  return Message::parse(builder.finish());
}

// `n` documents {"_id": i, "x": 1} as JSON, for batches.
inline std::vector<std::string> small_docs(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    std::string doc = "{\"_id\": ";
    doc.append(std::to_string(i)).append(", \"x\": 1}");
    out.push_back(std::move(doc));
  }
  return out;
}

// JSON of an array with n integer elements.
inline std::string int_array(int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) {
    if (i > 0) s.push_back(',');
    s.append(std::to_string(i));
  }
  return s + "]";
}

// A recorded message (tests/fixtures/*.hex: one message as hex).
inline std::vector<uint8_t> read_hex(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string hex;
  in >> hex;
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// Owned documents and single messages, for the codec tests.
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

// Whether `text` appears anywhere in a recordable message's bytes: a secret that leaked.
template <typename Recordable>
bool leaks(const Recordable& out, std::string_view text) {
  return std::string_view(reinterpret_cast<const char*>(out.bytes.data()), out.bytes.size())
             .find(text) != std::string_view::npos;
}

}  // namespace docguard::testing
