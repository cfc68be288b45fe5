// The upstream's identity from its hello replies (recorded_source.h).
#include "docguard/recording/recorded_source.h"

#include <cstdio>

#include "docguard/base/json_writer.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"

namespace docguard::recording {

namespace {

std::string utf8_of(const bson_iter_t& it) {
  uint32_t length = 0;
  const char* text = bson_iter_utf8(&it, &length);
  return std::string(text, length);
}

std::vector<std::string> strings_of(const bson_iter_t& array) {
  std::vector<std::string> out;
  bson_iter_t child;
  if (!BSON_ITER_HOLDS_ARRAY(&array) || !bson_iter_recurse(&array, &child)) return out;
  // A set lists a handful of members; a reply listing thousands is not worth keeping whole.
  while (bson_iter_next(&child) && out.size() < 64) {
    if (BSON_ITER_HOLDS_UTF8(&child)) out.push_back(utf8_of(child));
  }
  return out;
}

// The hex of an ObjectId (mongod's processId) or the text of a string (some servers).
std::string process_id_of(const bson_iter_t& it) {
  if (BSON_ITER_HOLDS_OID(&it)) {
    char hex[25];
    bson_oid_to_string(bson_iter_oid(&it), hex);
    return hex;
  }
  if (BSON_ITER_HOLDS_UTF8(&it)) return utf8_of(it);
  return {};
}

}  // namespace

bool is_hello_command(std::string_view command) {
  return command == "hello" || command == "isMaster" || command == "ismaster";
}

SourceIdentity identity_of_hello(const bson_t& reply) {
  SourceIdentity id;
  bson_iter_t it;
  if (bson_iter_init_find(&it, &reply, "setName") && BSON_ITER_HOLDS_UTF8(&it)) {
    id.set_name = utf8_of(it);
  }
  if (bson_iter_init_find(&it, &reply, "hosts")) id.hosts = strings_of(it);
  bson_iter_t version;
  if (bson_iter_init_find(&it, &reply, "topologyVersion") && BSON_ITER_HOLDS_DOCUMENT(&it) &&
      bson_iter_recurse(&it, &version) && bson_iter_find(&version, "processId")) {
    id.process_id = process_id_of(version);
  }
  bson_iter_t key_id;
  if (bson_iter_init(&it, &reply) &&
      bson_iter_find_descendant(&it, "$clusterTime.signature.keyId", &key_id) &&
      BSON_ITER_HOLDS_NUMBER(&key_id)) {
    id.key_id = bson_iter_as_int64(&key_id);
  }
  return id;
}

SourceIdentity source_from_json(const bson_t& source) {
  SourceIdentity id;
  bson_iter_t it;
  if (bson_iter_init_find(&it, &source, "setName") && BSON_ITER_HOLDS_UTF8(&it)) {
    id.set_name = utf8_of(it);
  }
  if (bson_iter_init_find(&it, &source, "hosts")) id.hosts = strings_of(it);
  if (bson_iter_init_find(&it, &source, "processId")) id.process_id = process_id_of(it);
  if (bson_iter_init_find(&it, &source, "keyId") && BSON_ITER_HOLDS_NUMBER(&it)) {
    id.key_id = bson_iter_as_int64(&it);
  }
  return id;
}

std::string hello_source_json(codec::Bytes reply) {
  codec::BsonView doc;
  try {
    if (reply.size() < codec::kHeaderSize) return {};
    const codec::MsgHeader header = codec::read_header(reply.data());
    if (header.op_code == codec::OpCode::kMsg) {
      doc = codec::op_msg_body(reply);
    } else if (header.op_code == codec::OpCode::kReply) {
      const codec::OpReply parsed = codec::OpReply::parse(reply);
      if (!parsed.documents.empty()) doc = parsed.documents.front();
    }
  } catch (const codec::ProtocolError&) {
    return {};
  }
  if (doc.empty()) return {};
  const bson_t borrowed = doc.borrow();
  const SourceIdentity id = identity_of_hello(borrowed);
  if (id.empty()) return {};
  json::Writer w;
  w.begin_object();
  if (!id.set_name.empty()) w.member("setName", id.set_name);
  if (!id.hosts.empty()) {
    w.key("hosts").begin_array();
    for (const std::string& host : id.hosts) w.value(host);
    w.end_array();
  }
  if (!id.process_id.empty()) w.member("processId", id.process_id);
  if (id.key_id != 0) w.member("keyId", id.key_id);
  w.end_object();
  return w.take();
}

}  // namespace docguard::recording
