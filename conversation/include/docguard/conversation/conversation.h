// One client connection's per-message policy, without sockets: the proxy hands it each request
// and each reply as bytes and gets back what to forward, what to answer, and what to drop, and
// what a reply says about the server's role (for failover). Every message docguard reads or
// writes is decoded and built here; the proxy moves bytes and picks servers.
// It owns what a connection remembers between messages: replies to rewrite (hello persona,
// merged write results, sampled reads), the requests that expect a reply (so that a reply to
// an unacknowledged, moreToCome request never reaches the client), the compressors each side
// agreed to, the client's app name and the user it authenticated as (auth_watcher.h).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "docguard/base/bounded_text.h"
#include "docguard/codec/command_view.h"
#include "docguard/codec/message.h"
#include "docguard/codec/op_compressed.h"
#include "docguard/codec/server_errors.h"
#include "docguard/conversation/auth_watcher.h"
#include "docguard/conversation/handshake.h"
#include "docguard/conversation/reply_signals.h"
#include "docguard/conversation/request_plan.h"
#include "docguard/rules/engine.h"

namespace docguard::conversation {

// What a conversation needs from its host: ids for messages docguard writes itself, and
// places to count what happened (the proxy's metrics).
class ConversationHost {
 public:
  virtual ~ConversationHost() = default;
  virtual int32_t new_request_id() = 0;
  virtual void on_compressed_request(codec::Compressor) {}
  virtual void on_inspected(double /*seconds*/) {}
  virtual void on_blocked() {}
  virtual void on_unacknowledged_reply_dropped(int32_t /*response_to*/) {}
};

struct ConversationSettings {
  PersonaSettings persona;
  uint32_t max_message_bytes = codec::kDefaultMaxMessageBytes;  // requests from the client
  // Whether the upstream answers commands only on an authenticated connection (the proxy's
  // upstream_auth, kept current by its probe and shared by every connection). While it does, a
  // connection's requests are judged, counted and learned from only once the server confirmed
  // its authentication: before that they pass untouched and the server answers them, so a
  // client without credentials learns nothing from docguard and spends none of its budgets.
  // Null: never (the offline judge, tests).
  const std::atomic<bool>* upstream_requires_auth = nullptr;
  // Refusals name the deciding rule's match glob, config line and guardrail id (errors.
  // reveal_rule_source); by default they do not: that is the operator's configuration.
  RefusalOptions refusals;
};

class Conversation {
 public:
  Conversation(rules::Engine& engine, const ConversationSettings& settings, std::string peer,
               ConversationHost& host);

  // What to do with one client request. `bytes` stays valid until the next on_request.
  struct RequestOutcome {
    enum class Action { kForward, kReply, kNothing } action = Action::kForward;
    codec::Bytes bytes;  // kForward: to the upstream; kReply: to the client
  };
  // Throws codec::ProtocolError on a malformed request.
  RequestOutcome on_request(codec::Bytes message);
  // The answer to a request the session cannot forward (no upstream): {ok: 0, code, codeName,
  // errmsg} in the request's reply family (kReply), or kNothing when the request expects no
  // reply (OP_MSG moreToCome). Counted as blocked.
  RequestOutcome refuse(codec::Bytes message, codec::ServerError code, const std::string& errmsg);

  // What to send the client for one upstream reply: `message` itself, a rewrite of it (valid
  // until the next on_reply), or nothing (`drop`: a reply to an unacknowledged request); and
  // what the reply says about the server's role, read from every reply, dropped or not.
  struct ReplyOutcome {
    bool drop = false;
    codec::Bytes bytes;
    ReplySignals signals;
  };
  // The reply is decoded once (OP_COMPRESSED decompressed) for the signals and any rewrite.
  // Throws codec::ProtocolError on a malformed reply that docguard had to read.
  ReplyOutcome on_reply(codec::Bytes message);

  // Requests forwarded that still expect a reply (an exhaust stream counts until its last reply).
  int64_t outstanding() const {
    return static_cast<int64_t>(awaiting_.size()) + (upstream_streaming_ ? 1 : 0);
  }
  // How many forwarded requests may await a reply at once. A driver has one per connection (an
  // exhaust stream included); more is a client pipelining without bound, and on_request throws
  // ProtocolError(kTooManyInFlight) rather than remember without limit.
  static constexpr size_t kMaxAwaitingReplies = 1024;
  // Whether this connection's requests are judged now: see upstream_requires_auth (false:
  // the upstream requires authentication and this client has not authenticated).
  bool judges() const {
    return auth_.authenticated() || settings_.upstream_requires_auth == nullptr ||
           !settings_.upstream_requires_auth->load(std::memory_order_relaxed);
  }
  // "name@db" once the client authenticated, else empty.
  const std::string& user() const { return auth_.user(); }
  // The driver's appName from its hello, else empty.
  const std::string& app_name() const { return app_name_; }
  // The subject of the client certificate docguard verified in the TLS handshake: the
  // connection's user from the handshake on (auth_watcher.h).
  void set_certificate_user(std::string_view subject);
  // The last OP_MSG request's command name and the traceparent of its trace context (section
  // kind 3), each at most kMaxLoggedBytes (cut and marked): for the request's log line. Empty
  // for other requests and for a request without one.
  static constexpr size_t kMaxLoggedBytes = 128;
  std::string_view request_command() const { return request_command_.view(); }
  std::string_view request_traceparent() const { return request_traceparent_.view(); }
  // The last OP_MSG request's violations, as the engine judged them (empty for other requests),
  // until the next request or release_request_buffer(): what the traffic recorder and the
  // offline judge (`docguard whatif`) say about it.
  const std::vector<rules::Violation>& request_violations() const { return request_violations_; }
  // The rule that decided the last request: the first blocking violation's kind, else the first
  // warning's; "" without one. A name from the rule-kind table, so it costs no copy.
  std::string_view request_rule() const;
  // The identity a recording holds beside the traffic, for replaying it offline: the recorded
  // authentication is redacted, so the user comes from the side file instead (empty: none).
  // The app is taken only while the conversation has none from a hello.
  void adopt_recorded_identity(std::string_view app, std::string_view user);
  // The time the next requests arrived at, for the rules' time windows (whatif: the recorded
  // time); unset, each request's arrival is read from the steady clock.
  void set_received_at(std::chrono::steady_clock::time_point at) { received_at_ = at; }
  // Releases the buffers used for the last message, so an idle connection holds none.
  void release_request_buffer();
  void release_reply_buffer();

 private:
  std::chrono::steady_clock::time_point received_at_{};  // set_received_at; {}: the clock's
  // What to do with the reply to one request; most requests need nothing and get no entry.
  struct PendingReply {
    enum class Kind { kHello, kLegacyHello, kMerge, kSample, kCatalog, kAuth } kind = Kind::kHello;
    std::shared_ptr<PendingMerge> merge;
    AuthWatcher::Step auth = AuthWatcher::Step::kNone;  // kAuth, and a hello that authenticates
    std::string db, collection;  // kSample: the request's namespace; kCatalog: its database
    codec::CommandKind command = codec::CommandKind::kOther;
    std::vector<uint8_t> request_body;  // kCatalog: the command, read again with its reply

    static PendingReply of(Kind kind, std::shared_ptr<PendingMerge> merge = nullptr) {
      PendingReply p;
      p.kind = kind;
      p.merge = std::move(merge);
      return p;
    }
  };

  RequestOutcome on_op_msg(const codec::MsgHeader& header, codec::Bytes inspect,
                           codec::Bytes forward);
  void on_op_query(const codec::MsgHeader& header, codec::Bytes inspect);
  // `plain` is the reply decompressed; `header` the one the upstream sent.
  std::vector<uint8_t> rewrite_reply(const PendingReply& pending, const codec::MsgHeader& header,
                                     codec::Bytes plain);
  bool upstream_accepts(codec::Compressor compressor) const;
  void note_hello(const codec::BsonView& hello);
  void note_auth_reply(AuthWatcher::Step step, const codec::BsonView& reply);
  void await_reply(int32_t request_id);
  // Whether a forwarded request with this id still awaits its reply.
  bool awaits(int32_t request_id) const {
    return std::find(awaiting_.begin(), awaiting_.end(), request_id) != awaiting_.end();
  }
  // The workload ledger: the reply's time and what it says, against its request's shapes.
  void record_workload(int32_t response_to, const ReplySignals& signals);

  rules::Engine& engine_;
  const ConversationSettings& settings_;
  ConversationHost& host_;
  std::string peer_;
  std::string app_name_;
  AuthWatcher auth_;
  rules::ConnectionScopeId scope_;  // which scoped rules apply, found again when app or user change
  std::vector<uint8_t> request_scratch_;
  // From the upstream's hello reply: which OP_MSG sections it takes (trace_context.h).
  std::optional<int64_t> upstream_max_wire_version_;
  base::BoundedText<kMaxLoggedBytes> request_command_;
  base::BoundedText<kMaxLoggedBytes> request_traceparent_;
  std::vector<rules::Violation> request_violations_;
  std::vector<uint8_t> reply_plain_;  // the last reply, decompressed
  std::vector<uint8_t> reply_scratch_;
  std::unordered_map<int32_t, PendingReply> pending_;
  // requestIDs of forwarded requests that expect a reply, oldest first. A server must not answer
  // an unacknowledged (moreToCome) request, but some do (FerretDB 1.x answers w:0 writes); such a
  // reply would desynchronise the driver. Remembering the requests that DO expect a reply (at
  // most what the client has in flight) rather than the unacknowledged ones (as many as a fast
  // client sends before its next read) lets every OP_MSG reply to anything else be dropped.
  std::vector<int32_t> awaiting_;
  // Forwarded requests whose operations the workload ledger identified (a subset of awaiting_):
  // when each was forwarded, and its shapes.
  struct TimedRequest {
    int32_t request_id = 0;
    std::chrono::steady_clock::time_point forwarded;
    rules::WorkloadMarks marks;
  };
  std::vector<TimedRequest> timed_;
  bool upstream_streaming_ = false;  // the last reply had moreToCome: a follow-up comes next
  int32_t last_reply_id_ = 0;        // requestID of the last reply passed on (exhaust follow-ups)
  bool any_reply_ = false;           // last_reply_id_ is set
  std::vector<codec::Compressor> client_compressors_;
  std::vector<codec::Compressor> upstream_compressors_;
};

}  // namespace docguard::conversation
