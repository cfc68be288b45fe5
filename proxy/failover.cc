#include "docguard/proxy/failover.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/op_compressed.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"

namespace docguard::proxy {
namespace {

int32_t code_of(const bson_iter_t& it) {
  return BSON_ITER_HOLDS_NUMBER(&it) ? static_cast<int32_t>(bson_iter_as_int64(&it)) : 0;
}

bool hello_not_writable_in(const codec::BsonView& doc) {
  if (doc.empty()) return false;
  bson_t b = doc.borrow();
  bson_iter_t it;
  if (bson_iter_init(&it, &b)) {
    while (bson_iter_next(&it)) {
      const std::string_view key(bson_iter_key(&it), bson_iter_key_len(&it));
      if (key == "isWritablePrimary" || key == "ismaster") return !bson_iter_as_bool(&it);
    }
  }
  return false;
}

int32_t state_change_code_in(const codec::BsonView& doc) {
  // Only the top level and the write errors are read, through libbson's bounds-checked
  // iterators: this runs on every reply, so the document is not validated as a whole.
  if (doc.empty()) return 0;
  bson_t b = doc.borrow();
  bson_iter_t it;
  if (bson_iter_init_find(&it, &b, "code") && is_state_change_code(code_of(it))) {
    return code_of(it);
  }
  bson_iter_t child;
  if (bson_iter_init_find(&it, &b, "writeConcernError") && BSON_ITER_HOLDS_DOCUMENT(&it) &&
      bson_iter_recurse(&it, &child) && bson_iter_find(&child, "code") &&
      is_state_change_code(code_of(child))) {
    return code_of(child);
  }
  if (bson_iter_init_find(&it, &b, "writeErrors") && BSON_ITER_HOLDS_ARRAY(&it) &&
      bson_iter_recurse(&it, &child)) {
    while (bson_iter_next(&child)) {
      bson_iter_t entry;
      if (BSON_ITER_HOLDS_DOCUMENT(&child) && bson_iter_recurse(&child, &entry) &&
          bson_iter_find(&entry, "code") && is_state_change_code(code_of(entry))) {
        return code_of(entry);
      }
    }
  }
  return 0;
}

}  // namespace

bool is_state_change_code(int32_t code) {
  switch (code) {
    case 10107:  // NotWritablePrimary
    case 13435:  // NotPrimaryNoSecondaryOk
    case 13436:  // NotPrimaryOrSecondary
    case 189:    // PrimarySteppedDown
    case 91:     // ShutdownInProgress
    case 11602:  // InterruptedDueToReplStateChange
      return true;
    default:
      return false;
  }
}

ReplySignals read_reply_signals(codec::Bytes reply, uint32_t max_message_bytes) {
  ReplySignals out;
  try {
    if (reply.size() < codec::kHeaderSize) return out;
    std::vector<uint8_t> plain;
    int32_t op = codec::read_header(reply.data()).op_code;
    if (op == static_cast<int32_t>(codec::OpCode::kCompressed)) {
      plain = codec::decompress_message(reply, max_message_bytes);
      reply = plain;
      op = codec::read_header(reply.data()).op_code;
    }
    codec::BsonView body;
    std::optional<codec::OpMsg> msg;
    std::optional<codec::OpReply> legacy;
    if (op == static_cast<int32_t>(codec::OpCode::kMsg)) {
      msg = codec::OpMsg::parse(reply, /*verify_checksum=*/false);
      body = msg->body;
    } else if (op == static_cast<int32_t>(codec::OpCode::kReply)) {
      legacy = codec::OpReply::parse(reply);
      if (!legacy->documents.empty()) body = legacy->documents.front();
    }
    out.state_change_code = state_change_code_in(body);
    out.hello_not_writable = hello_not_writable_in(body);
  } catch (const std::exception&) {
    // Not readable: the conversation decides what a malformed reply means.
  }
  return out;
}

int32_t state_change_code(codec::Bytes reply, uint32_t max_message_bytes) {
  return read_reply_signals(reply, max_message_bytes).state_change_code;
}

bool must_leave_server(const cluster::Topology& topology, std::string_view server,
                       uint64_t pinned_generation) {
  // Only a cluster has somewhere else to go: in front of a single server, connections stay
  // (a missed heartbeat must not close every client connection).
  const auto type = topology.type;
  if (type != cluster::TopologyType::kReplicaSetNoPrimary &&
      type != cluster::TopologyType::kReplicaSetWithPrimary &&
      type != cluster::TopologyType::kSharded) {
    return false;
  }
  return topology.primary_generation != pinned_generation && !topology.is_writable(server);
}

std::string pick_server(const cluster::Topology& topology, uint64_t spread,
                        const std::vector<std::string>& excluded) {
  const auto& c = topology.candidates;
  for (size_t i = 0; i < c.size(); ++i) {
    const auto& server = c[(spread + i) % c.size()];
    if (std::find(excluded.begin(), excluded.end(), server) == excluded.end()) return server;
  }
  return {};
}

bool may_dial_seed(const cluster::Topology& topology, size_t seed_count, bool is_srv,
                   bool has_replica_set) {
  if (seed_count != 1 || is_srv || has_replica_set) return false;
  return topology.type == cluster::TopologyType::kUnknown ||
         topology.type == cluster::TopologyType::kSingle;
}

std::vector<uint8_t> no_writable_server_reply(codec::Bytes request, int32_t reply_id,
                                              const std::string& errmsg) {
  if (request.size() < codec::kHeaderSize) return {};
  const auto header = codec::read_header(request.data());
  int32_t op = header.op_code;
  uint32_t flags = 0;
  if (op == static_cast<int32_t>(codec::OpCode::kCompressed)) {
    op = static_cast<int32_t>(codec::OpCode::kMsg);
  } else if (op == static_cast<int32_t>(codec::OpCode::kMsg) &&
             request.size() >= codec::kHeaderSize + 4) {
    flags = static_cast<uint32_t>(codec::load_le32(request.data() + codec::kHeaderSize));
  }
  if ((flags & codec::op_msg_flags::kMoreToCome) != 0) return {};
  codec::OwnedBson doc;
  BSON_APPEND_DOUBLE(doc.get(), "ok", 0.0);
  BSON_APPEND_UTF8(doc.get(), "errmsg", errmsg.c_str());
  BSON_APPEND_INT32(doc.get(), "code", 133);
  BSON_APPEND_UTF8(doc.get(), "codeName", "FailedToSatisfyReadPreference");
  if (op == static_cast<int32_t>(codec::OpCode::kQuery)) {
    return codec::build_op_reply(reply_id, header.request_id, doc.view().bytes());
  }
  return codec::OpMsgBuilder(reply_id, header.request_id).body(doc.get()).finish();
}

}  // namespace docguard::proxy
