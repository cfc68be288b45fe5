// The reply side of a conversation: which request a reply answers, the signals read from every
// reply, the ledger's timing, and the rewrites docguard owes the client (the handshake's persona,
// merged batches, what the advisor learns from catalog commands).
#include <algorithm>
#include <chrono>
#include <optional>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/bson_view.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"
#include "docguard/conversation/conversation.h"
#include "docguard/conversation/reply_merge.h"

namespace docguard::conversation {

namespace {

bool is_reply_more_to_come(codec::Bytes message) {
  if (message.size() < codec::kHeaderSize + 4) return false;
  if (codec::read_header(message.data()).op_code != codec::OpCode::kMsg) {
    return false;
  }
  return (static_cast<uint32_t>(codec::load_le32(message.data() + codec::kHeaderSize)) &
          codec::op_msg_flags::kMoreToCome) != 0;
}

// The opcode a reply carries, looking inside OP_COMPRESSED (its originalOpcode).
codec::OpCode reply_op_code(codec::Bytes message) {
  const codec::OpCode op = codec::read_header(message.data()).op_code;
  if (op == codec::OpCode::kCompressed && message.size() >= codec::kHeaderSize + 4) {
    return static_cast<codec::OpCode>(codec::load_le32(message.data() + codec::kHeaderSize));
  }
  return op;
}

// The command again, from the copy kept while its reply was awaited.
codec::CommandView catalog_view(const std::vector<uint8_t>& body, std::string_view db) {
  codec::CommandView view;
  view.body = codec::BsonView{body.data(), static_cast<uint32_t>(body.size())};
  view.database = db;
  codec::BsonElements it(view.body);
  if (it.next()) {
    view.name = it.key;
    view.kind = codec::kind_of(view.name);
    view.collection = it.utf8();
  }
  return view;
}

}  // namespace

void Conversation::record_workload(int32_t response_to, const ReplySignals& signals) {
  auto timed = std::find_if(timed_.begin(), timed_.end(),
                            [&](const TimedRequest& t) { return t.request_id == response_to; });
  if (timed == timed_.end()) return;
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - timed->forwarded);
  rules::WorkloadLedger::record(
      timed->marks, {static_cast<uint64_t>(std::max<int64_t>(micros.count(), 0)), signals.documents,
                     signals.failed});
  // Order does not matter (found by id): the last one takes its place.
  if (timed != timed_.end() - 1) *timed = std::move(timed_.back());
  timed_.pop_back();
}

Conversation::ReplyOutcome Conversation::on_reply(codec::Bytes message) {
  const auto header = codec::read_header(message.data());
  // The reply is decompressed once, for the signals and any rewrite. One that will not
  // decompress is still relayed as it came (the driver reports it) unless it must be rewritten.
  codec::Bytes plain = message;
  std::optional<codec::ProtocolError> unreadable;
  if (header.op_code == codec::OpCode::kCompressed) {
    try {
      // Replies may be as large as the server allows, whatever docguard's request limit.
      reply_plain_ = codec::decompress_message(
          message, std::max(settings_.max_message_bytes, codec::kDefaultMaxMessageBytes));
      plain = reply_plain_;
    } catch (const codec::ProtocolError& e) {
      unreadable = e;
      plain = {};
    }
  }
  // Read from every reply, dropped or not: a state change is news wherever it comes from.
  // The ledger's part only while it waits for a reply (never with the ledger off).
  const ReplySignals signals = read_reply_signals(plain, !timed_.empty());
  // An exhaust stream's follow-up answers the previous reply, not a request: while the last
  // reply said moreToCome, or when responseTo names that reply, it belongs to the client.
  const bool follow_up =
      upstream_streaming_ || (any_reply_ && header.response_to == last_reply_id_);
  auto awaited = std::find(awaiting_.begin(), awaiting_.end(), header.response_to);
  if (awaited != awaiting_.end()) {
    awaiting_.erase(awaited);
    if (!timed_.empty()) record_workload(header.response_to, signals);
  } else if (!follow_up && reply_op_code(message) == codec::OpCode::kMsg) {
    // Nobody waits for it: the answer to an unacknowledged request. (Legacy OP_REPLY is passed
    // on: its exhaust follow-ups repeat the request's id, and moreToCome is OP_MSG only.)
    host_.on_unacknowledged_reply_dropped(header.response_to);
    return {true, {}, signals};
  }
  // The flag is the plain message's: a compressed reply's first bytes after its header are the
  // original opcode, not the OP_MSG flags.
  upstream_streaming_ = is_reply_more_to_come(plain);
  last_reply_id_ = header.request_id;
  any_reply_ = true;
  if (!pending_.empty()) {
    if (auto it = pending_.find(header.response_to); it != pending_.end()) {
      const PendingReply pending = std::move(it->second);
      pending_.erase(it);
      if (unreadable) throw *unreadable;
      std::vector<uint8_t> rewritten = rewrite_reply(pending, header, plain);
      if (!rewritten.empty()) {
        reply_scratch_ = std::move(rewritten);
        return {false, reply_scratch_, signals};
      }
    }
  }
  return {false, message, signals};
}

std::vector<uint8_t> Conversation::rewrite_reply(const PendingReply& pending,
                                                 const codec::MsgHeader& header,
                                                 codec::Bytes plain) {
  const codec::OpCode op = codec::read_header(plain.data()).op_code;
  switch (pending.kind) {
    case PendingReply::Kind::kLegacyHello: {
      if (op != codec::OpCode::kReply) return {};
      const auto reply = codec::OpReply::parse(plain);
      if (reply.documents.empty()) return {};
      note_auth_reply(pending.auth, reply.documents[0]);
      auto rewritten =
          rewrite_hello_reply(reply.documents[0], client_compressors_, settings_.persona);
      upstream_compressors_ = rewritten.upstream_compressors;
      upstream_max_wire_version_ = rewritten.upstream_max_wire_version;
      return codec::build_op_reply(header.request_id, header.response_to,
                                   rewritten.reply.view().bytes(), reply.response_flags);
    }
    case PendingReply::Kind::kHello: {
      if (op != codec::OpCode::kMsg) return {};
      const auto reply = codec::OpMsg::parse(plain);
      note_auth_reply(pending.auth, reply.body);
      auto rewritten = rewrite_hello_reply(reply.body, client_compressors_, settings_.persona);
      upstream_compressors_ = rewritten.upstream_compressors;
      upstream_max_wire_version_ = rewritten.upstream_max_wire_version;
      return codec::OpMsgBuilder(header.request_id, header.response_to)
          .body(rewritten.reply.get())
          .finish();
    }
    case PendingReply::Kind::kMerge: {
      if (op != codec::OpCode::kMsg) return {};
      const auto reply = codec::OpMsg::parse(plain);
      return merge_reply(*pending.merge, reply, header.response_to);
    }
    case PendingReply::Kind::kSample: {
      if (op == codec::OpCode::kMsg) {
        const auto reply = codec::OpMsg::parse(plain);
        codec::CommandView request;
        request.kind = pending.command;
        request.database = pending.db;
        request.collection = pending.collection;
        engine_.observe_reply(request, reply);
      }
      return {};
    }
    case PendingReply::Kind::kAuth: {
      if (op == codec::OpCode::kMsg) {
        note_auth_reply(pending.auth, codec::OpMsg::parse(plain).body);
      }
      return {};
    }
    case PendingReply::Kind::kCatalog: {
      if (op == codec::OpCode::kMsg) {
        engine_.observe_catalog_reply(catalog_view(pending.request_body, pending.db),
                                      codec::OpMsg::parse(plain));
      }
      return {};
    }
  }
  return {};
}

}  // namespace docguard::conversation
