#include "docguard/conversation/conversation.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>

#include "docguard/base/bounded_text.h"
#include "docguard/codec/bson_view.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"
#include "docguard/codec/request_identity.h"
#include "docguard/conversation/reply_merge.h"
#include "error_documents.h"
#include "time_limit.h"
#include "trace_context.h"

namespace docguard::conversation {

namespace {

// Nothing is kept between messages. Almost every use replaces a scratch buffer wholesale (a
// decompressed message, a rewritten reply or request is a new vector), so keeping its capacity
// saves no allocation, while an idle connection would hold a copy of the last reply rewritten
// for it (the handshake's hello reply) for as long as it stays open.
void trim(std::vector<uint8_t>& buffer) {
  if (buffer.capacity() > 0) std::vector<uint8_t>().swap(buffer);
}

// Legacy requests a server never answers.
bool legacy_without_reply(codec::OpCode op) {
  return op == codec::OpCode::kInsert || op == codec::OpCode::kUpdate ||
         op == codec::OpCode::kDelete || op == codec::OpCode::kKillCursors;
}

// Commands whose success changes (or lists) indexes, validators or collections: the rules
// engine's advice sink learns from their replies. Rare, so remembering the request costs nothing.
bool is_catalog_command(const codec::CommandView& view) {
  if (view.kind != codec::CommandKind::kOther && view.kind != codec::CommandKind::kCreate) {
    return false;
  }
  static constexpr std::string_view kNames[] = {
      "createIndexes", "dropIndexes",  "deleteIndexes",    "collMod",     "create",
      "drop",          "dropDatabase", "renameCollection", "listIndexes", "listCollections"};
  for (std::string_view name : kNames) {
    if (view.name == name) return true;
  }
  return false;
}

}  // namespace

Conversation::Conversation(rules::Engine& engine, const ConversationSettings& settings,
                           std::string peer, ConversationHost& host)
    : engine_(engine), settings_(settings), host_(host), peer_(std::move(peer)), scope_(peer_) {}

void Conversation::release_request_buffer() {
  trim(request_scratch_);
  // An idle connection keeps no violation of its last request either.
  if (request_violations_.capacity() > 0) std::vector<rules::Violation>().swap(request_violations_);
}

std::string_view Conversation::request_rule() const {
  for (const rules::Violation& v : request_violations_) {
    if (v.action == rules::Action::kBlock) return rules::rule_name(v.kind);
  }
  return request_violations_.empty() ? std::string_view{}
                                     : rules::rule_name(request_violations_.front().kind);
}

void Conversation::adopt_recorded_identity(std::string_view app, std::string_view user) {
  if (app_name_.empty() && !app.empty()) {
    app_name_ = std::string(app);
    scope_.forget();
  }
  if (auth_.user() != user) {
    auth_.set_recorded_user(user);
    scope_.forget();
  }
}
void Conversation::release_reply_buffer() {
  trim(reply_plain_);
  trim(reply_scratch_);
  // The bucket array stays after the last entry is erased: drop it, most requests add none.
  if (pending_.empty() && pending_.bucket_count() > 1) decltype(pending_)().swap(pending_);
}

bool Conversation::upstream_accepts(codec::Compressor compressor) const {
  return std::find(upstream_compressors_.begin(), upstream_compressors_.end(), compressor) !=
         upstream_compressors_.end();
}

void Conversation::note_hello(const codec::BsonView& hello) {
  client_compressors_ = supported_compressors(hello);
  if (app_name_.empty()) {
    app_name_ = client_app_name(hello);
    scope_.forget();
  }
}

void Conversation::set_certificate_user(std::string_view subject) {
  auth_.set_certificate_user(subject);
  scope_.forget();
}

void Conversation::note_auth_reply(AuthWatcher::Step step, const codec::BsonView& reply) {
  if (auth_.on_reply(step, reply)) scope_.forget();
}

Conversation::RequestOutcome Conversation::on_request(codec::Bytes message) {
  const auto header = codec::read_header(message.data());
  codec::Bytes forward = message;
  codec::Bytes inspect = message;
  codec::OpCode op = header.op_code;
  request_command_.clear();
  request_traceparent_.clear();
  request_violations_.clear();

  if (op == codec::OpCode::kCompressed) {
    const auto compressor = static_cast<codec::Compressor>(message[codec::kHeaderSize + 8]);
    request_scratch_ = codec::decompress_message(message, settings_.max_message_bytes);
    host_.on_compressed_request(compressor);
    inspect = request_scratch_;
    op = codec::read_header(request_scratch_.data()).op_code;
    // docguard offers clients every compressor it can read; an upstream that did not agree
    // to this one gets the message uncompressed.
    if (!upstream_accepts(compressor)) forward = request_scratch_;
  }

  if (op == codec::OpCode::kMsg) return on_op_msg(header, inspect, forward);
  if (op == codec::OpCode::kQuery) on_op_query(header, inspect);
  // Other legacy opcodes pass through untouched; servers since 5.1 refuse them themselves.
  if (!legacy_without_reply(op)) await_reply(header.request_id);
  return {RequestOutcome::Action::kForward, forward};
}

[[gnu::always_inline]] inline void Conversation::await_reply(int32_t request_id) {
  if (awaiting_.size() >= kMaxAwaitingReplies) {
    throw codec::ProtocolError(codec::ErrorKind::kTooManyInFlight,
                               "more than " + std::to_string(kMaxAwaitingReplies) +
                                   " requests awaiting a reply on one connection");
  }
  awaiting_.push_back(request_id);
}

Conversation::RequestOutcome Conversation::on_op_msg(const codec::MsgHeader& header,
                                                     codec::Bytes inspect, codec::Bytes forward) {
  const auto started = std::chrono::steady_clock::now();
  const codec::OpMsg msg = codec::OpMsg::parse(inspect);
  if ((msg.flags & ~(codec::op_msg_flags::kRequiredMask | codec::op_msg_flags::kKnownMask)) != 0) {
    // Unknown optional bits must be cleared before forwarding; do it on an uncompressed copy
    // (only the flags change, so `msg`'s views into `inspect` stay right).
    if (inspect.data() != request_scratch_.data()) {
      request_scratch_.assign(inspect.begin(), inspect.end());
    }
    codec::clear_unknown_optional_flags(request_scratch_);
    if (msg.checksum_present) codec::recompute_checksum(request_scratch_);
    forward = request_scratch_;
  }
  const codec::CommandView view = codec::describe(msg);
  request_command_.assign(view.name);
  if (!view.traceparent.empty()) {
    request_traceparent_.assign(view.traceparent);
  }
  // Only a hello or a command docguard does not judge can be an authentication step: reads
  // and writes skip the call.
  AuthWatcher::Step auth =
      view.kind == codec::CommandKind::kHello || view.kind == codec::CommandKind::kOther
          ? auth_.on_request(view)
          : AuthWatcher::Step::kNone;
  // A step is believed only from the reply to its own request: with an earlier request of the
  // same id still awaiting its reply, that reply (a ping's ok: 1) would be taken for the step's.
  if (auth != AuthWatcher::Step::kNone && awaits(header.request_id)) {
    auth = AuthWatcher::Step::kNone;
  }
  if (view.kind == codec::CommandKind::kHello) {
    pending_[header.request_id] = PendingReply::of(PendingReply::Kind::kHello);
    pending_[header.request_id].auth = auth;
    note_hello(msg.body);
  } else if (auth != AuthWatcher::Step::kNone && !view.more_to_come) {
    pending_[header.request_id] = PendingReply::of(PendingReply::Kind::kAuth);
    pending_[header.request_id].auth = auth;
  }
  // Before the server would judge this connection's commands (upstream_requires_auth), docguard
  // does not either: the request is not inspected, counted, sampled or learned from, and goes
  // upstream as it came (less a trace context the upstream cannot take).
  const bool judged = judges();
  const rules::RequestContext context{
      app_name_, peer_, auth_.user(), &scope_,
      received_at_ != std::chrono::steady_clock::time_point{} ? received_at_ : started};
  // One prvalue either way: the verdict is built in place, not moved.
  rules::Verdict verdict = judged ? engine_.inspect(view, context) : rules::Verdict{};
  // What goes upstream: the request, less its trace context when the upstream would close the
  // connection on it (trace_context.h). The rules and the log line still see it in `view`.
  const bool drop_trace_context = !msg.trace_context.empty() &&
                                  !detail::upstream_takes_trace_context(upstream_max_wire_version_);
  // On the heap, and only then: an empty optional of an OpMsg costs its setup on every
  // message.
  std::unique_ptr<codec::OpMsg> untraced;
  if (drop_trace_context) {
    untraced = std::make_unique<codec::OpMsg>(msg);
    untraced->trace_context = {};
  }
  const codec::OpMsg& sent = untraced ? *untraced : msg;
  std::vector<uint8_t> rebuilt;
  // Inspection ends, and the upstream's time (the workload ledger's) starts, here.
  auto inspected = [&] {
    const auto now = std::chrono::steady_clock::now();
    if (judged) host_.on_inspected(std::chrono::duration<double>(now - started).count());
    return now;
  };
  std::chrono::steady_clock::time_point forwarded;
  if (verdict.any_block()) {
    RequestPlan plan =
        plan_request(sent, view, verdict, host_.new_request_id(), settings_.refusals);
    // Kept for the recorder's side file and the offline judge once the plan has read them;
    // moving the vector costs no copy.
    request_violations_ = std::move(verdict.violations);
    forwarded = inspected();
    switch (plan.kind) {
      case RequestPlan::Kind::kForwardOriginal:
        if (drop_trace_context) rebuilt = detail::without_trace_context(sent);
        break;
      case RequestPlan::Kind::kForwardRewritten:
        if (!view.more_to_come) {
          pending_[header.request_id] = PendingReply::of(PendingReply::Kind::kMerge, plan.merge);
        }
        request_scratch_ = std::move(plan.message);
        // The statements that go on keep the rule's time limit, as a whole batch would.
        if (verdict.max_time_ms > 0) {
          request_scratch_ =
              detail::with_max_time(codec::OpMsg::parse(request_scratch_), verdict.max_time_ms);
        }
        forward = request_scratch_;
        break;
      case RequestPlan::Kind::kReplyNow:
        host_.on_blocked();
        request_scratch_ = std::move(plan.message);
        return {RequestOutcome::Action::kReply, request_scratch_};
      case RequestPlan::Kind::kDrop:
        host_.on_blocked();
        return {RequestOutcome::Action::kNothing, {}};
    }
  } else {
    forwarded = inspected();
    if (!verdict.violations.empty()) request_violations_ = std::move(verdict.violations);
    // A guardrail rule's time limit for a command without one, and a trace context the
    // upstream cannot take: the only changes docguard makes to a request it forwards whole.
    // Kept aside until the views into the request (possibly in request_scratch_) are no longer
    // read.
    if (verdict.max_time_ms > 0) {
      rebuilt = detail::with_max_time(sent, verdict.max_time_ms);
    } else if (drop_trace_context) {
      rebuilt = detail::without_trace_context(sent);
    }
    if (!judged || view.more_to_come) {
      // Nothing to learn from the reply.
    } else if (is_catalog_command(view)) {
      auto p = PendingReply::of(PendingReply::Kind::kCatalog);
      p.db = std::string(view.database);
      p.request_body.assign(view.body.data, view.body.data + view.body.size);
      pending_[header.request_id] = std::move(p);
    } else if (engine_.wants_reply_sample(view)) {
      auto p = PendingReply::of(PendingReply::Kind::kSample);
      p.db = std::string(view.database);
      p.collection = std::string(view.collection);
      p.command = view.kind;
      pending_[header.request_id] = std::move(p);
    }
  }
  if (!msg.more_to_come()) {
    await_reply(header.request_id);
    if (!verdict.workload.empty()) {
      // Built in place: the marks move once, into the vector.
      TimedRequest& timed = timed_.emplace_back();
      timed.request_id = header.request_id;
      timed.forwarded = forwarded;
      timed.marks = std::move(verdict.workload);
    }
  }
  if (!rebuilt.empty()) {
    request_scratch_ = std::move(rebuilt);
    forward = request_scratch_;
  }
  return {RequestOutcome::Action::kForward, forward};
}

void Conversation::on_op_query(const codec::MsgHeader& header, codec::Bytes inspect) {
  const codec::OpQuery query = codec::OpQuery::parse(inspect);
  const codec::BsonView command = codec::legacy_command_document(query.query);
  if (query.full_collection_name.ends_with(".$cmd") && codec::is_hello_command(command)) {
    pending_[header.request_id] = PendingReply::of(PendingReply::Kind::kLegacyHello);
    const std::string_view ns = query.full_collection_name;
    const AuthWatcher::Step step = auth_.on_legacy_hello(command, ns.substr(0, ns.find('.')));
    pending_[header.request_id].auth =
        awaits(header.request_id) ? AuthWatcher::Step::kNone : step;  // as in on_op_msg
    note_hello(command);
  }
}

Conversation::RequestOutcome Conversation::refuse(codec::Bytes message, codec::ServerError code,
                                                  const std::string& errmsg) {
  request_scratch_ = detail::error_reply(message, host_.new_request_id(), code, errmsg);
  if (request_scratch_.empty()) return {RequestOutcome::Action::kNothing, {}};
  host_.on_blocked();
  return {RequestOutcome::Action::kReply, request_scratch_};
}

}  // namespace docguard::conversation
