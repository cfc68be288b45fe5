#include "docguard/proxy/failover.h"

#include <algorithm>
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

// The first state-change code among the `code` fields of the documents in an array (the
// write errors).
int32_t state_change_code_in_entries(const bson_iter_t& array) {
  bson_iter_t child;
  if (!BSON_ITER_HOLDS_ARRAY(&array) || !bson_iter_recurse(&array, &child)) return 0;
  while (bson_iter_next(&child)) {
    bson_iter_t entry;
    if (BSON_ITER_HOLDS_DOCUMENT(&child) && bson_iter_recurse(&child, &entry) &&
        bson_iter_find(&entry, "code") && is_state_change_code(code_of(entry))) {
      return code_of(entry);
    }
  }
  return 0;
}

// Both signals in one pass over the top level: this runs on every reply, and most replies hold
// neither, so one walk of their few top-level keys is all they cost. Each field counts at its
// first occurrence, and the top-level `code` wins over `writeConcernError.code`, which wins
// over `writeErrors[].code`, as drivers check them. Only libbson's bounds-checked iterators
// read the document, so it is not validated as a whole.
ReplySignals signals_in(const codec::BsonView& doc) {
  ReplySignals out;
  if (doc.empty()) return out;
  bson_t b = doc.borrow();
  bson_iter_t it;
  if (!bson_iter_init(&it, &b)) return out;
  int32_t top = 0, concern = 0, write_errors = 0;
  bool seen_code = false, seen_concern = false, seen_errors = false, seen_hello = false;
  while (bson_iter_next(&it)) {
    const std::string_view key = codec::key_of(it);
    if (key == "code") {
      if (!seen_code && is_state_change_code(code_of(it))) top = code_of(it);
      seen_code = true;
    } else if (key == "writeConcernError") {
      bson_iter_t child;
      if (!seen_concern && BSON_ITER_HOLDS_DOCUMENT(&it) && bson_iter_recurse(&it, &child) &&
          bson_iter_find(&child, "code") && is_state_change_code(code_of(child))) {
        concern = code_of(child);
      }
      seen_concern = true;
    } else if (key == "writeErrors") {
      if (!seen_errors) write_errors = state_change_code_in_entries(it);
      seen_errors = true;
    } else if (key == "isWritablePrimary" || key == "ismaster") {
      if (!seen_hello) out.hello_not_writable = !bson_iter_as_bool(&it);
      seen_hello = true;
    }
  }
  out.state_change_code = top != 0 ? top : concern != 0 ? concern : write_errors;
  return out;
}

// The body (kind 0 section) of an OP_MSG, with the framing checks of OpMsg::parse but without
// walking the documents (signals_in reads only what it needs, bounds-checked). Empty when the
// framing is wrong.
codec::BsonView op_msg_body(codec::Bytes message) {
  if (message.size() < codec::kHeaderSize + 4) return {};
  if (codec::read_header(message.data()).message_length != static_cast<int32_t>(message.size())) {
    return {};
  }
  const auto flags = static_cast<uint32_t>(codec::load_le32(message.data() + codec::kHeaderSize));
  if ((flags & codec::op_msg_flags::kRequiredMask & ~codec::op_msg_flags::kKnownMask) != 0) {
    return {};
  }
  size_t end = message.size();
  if ((flags & codec::op_msg_flags::kChecksumPresent) != 0) {
    if (end < codec::kHeaderSize + 8) return {};
    end -= 4;
  }
  codec::BsonView body;
  size_t pos = codec::kHeaderSize + 4;
  while (pos < end) {
    const uint8_t kind = message[pos++];
    if (kind == 0 && body.empty()) {
      body = codec::checked_bson(message.subspan(pos, end - pos));  // throws when malformed
      pos += body.size;
    } else if (kind == 1 && end - pos >= 4) {
      const int32_t size = codec::load_le32(message.data() + pos);
      if (size < 5 || static_cast<size_t>(size) > end - pos) return {};
      pos += static_cast<size_t>(size);
    } else {
      return {};
    }
  }
  return body;
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
  try {
    if (reply.size() < codec::kHeaderSize) return {};
    std::vector<uint8_t> plain;
    codec::OpCode op = codec::read_header(reply.data()).op_code;
    if (op == codec::OpCode::kCompressed) {
      plain = codec::decompress_message(reply, max_message_bytes);
      reply = plain;
      op = codec::read_header(reply.data()).op_code;
    }
    if (op == codec::OpCode::kMsg) return signals_in(op_msg_body(reply));
    if (op == codec::OpCode::kReply) {
      const auto legacy = codec::OpReply::parse(reply);
      if (!legacy.documents.empty()) return signals_in(legacy.documents.front());
    }
  } catch (const std::exception&) {
    // Not readable: the conversation decides what a malformed reply means.
  }
  return {};
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
  codec::OpCode op = header.op_code;
  uint32_t flags = 0;
  if (op == codec::OpCode::kCompressed) {
    op = codec::OpCode::kMsg;
  } else if (op == codec::OpCode::kMsg && request.size() >= codec::kHeaderSize + 4) {
    flags = static_cast<uint32_t>(codec::load_le32(request.data() + codec::kHeaderSize));
  }
  if ((flags & codec::op_msg_flags::kMoreToCome) != 0) return {};
  codec::OwnedBson doc;
  BSON_APPEND_DOUBLE(doc.get(), "ok", 0.0);
  BSON_APPEND_UTF8(doc.get(), "errmsg", errmsg.c_str());
  BSON_APPEND_INT32(doc.get(), "code", 133);
  BSON_APPEND_UTF8(doc.get(), "codeName", "FailedToSatisfyReadPreference");
  if (op == codec::OpCode::kQuery) {
    return codec::build_op_reply(reply_id, header.request_id, doc.view().bytes());
  }
  return codec::OpMsgBuilder(reply_id, header.request_id).body(doc.get()).finish();
}

}  // namespace docguard::proxy
