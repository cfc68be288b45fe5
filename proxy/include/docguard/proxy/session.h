// One client connection and its own upstream connection.
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "docguard/cluster/topology.h"
#include "docguard/codec/inbound_buffer.h"
#include "docguard/codec/op_compressed.h"
#include "docguard/conversation/reply_merge.h"
#include "docguard/conversation/request_plan.h"
#include "docguard/proxy/runtime.h"
#include "docguard/proxy/session_sweep.h"
#include "docguard/proxy/stream.h"

namespace docguard::proxy {

// What a session reaches of the process's shared state (ProxyRuntime), and nothing more:
// built by whoever creates sessions.
struct SessionContext {
  const ProxyConfig& config;
  telemetry::Metrics& metrics;
  rules::Engine& engine;
  // The per-message policy of TCP clients (a Unix socket's client brings its socket's own).
  const conversation::ConversationSettings& conversation;
  const TlsContexts& tls;
  recording::Recorder& recorder;
  const std::unique_ptr<Router>& router;  // set at startup, before any session
  std::atomic<int64_t>& active_sessions;
  RequestIds& request_ids;
};

// The references a session takes, out of the process's runtime.
inline SessionContext session_context(ProxyRuntime& rt) {
  return {rt.config,   rt.metrics, rt.engine,          rt.conversation, rt.tls,
          rt.recorder, rt.router,  rt.active_sessions, rt.request_ids};
}

// Counts what the conversation reports in the process's metrics.
class SessionHost : public conversation::ConversationHost {
 public:
  SessionHost(telemetry::Metrics& metrics, RequestIds& request_ids)
      : metrics_(metrics), request_ids_(request_ids) {}
  int32_t new_request_id() override { return request_ids_.next(); }
  void on_compressed_request(codec::Compressor compressor) override;
  void on_inspected(double seconds) override;
  void on_blocked() override;
  void on_unacknowledged_reply_dropped(int32_t response_to) override;

 private:
  telemetry::Metrics& metrics_;
  RequestIds& request_ids_;
};

// A client that came through a Unix socket listener.
struct UnixSocketClient {
  std::string peer;  // its name in logs (unix_peer_name)
  // The persona its socket presents (the socket's path as the member's address).
  const conversation::ConversationSettings* conversation = nullptr;
};

class Session final : public std::enable_shared_from_this<Session>, private SweepItem {
 public:
  // `client` is a TCP connection, or with `unix_client` a Unix socket's descriptor in a
  // tcp::socket (see server.cc): then nothing TCP-specific is done with it.
  Session(boost::asio::ip::tcp::socket client, const SessionContext& context,
          std::optional<UnixSocketClient> unix_client = std::nullopt);
  ~Session();

  // Connects upstream and relays until either side closes. `self` (this session) keeps it
  // alive while it runs, so the caller may co_spawn it and drop its own reference.
  boost::asio::awaitable<void> run(std::shared_ptr<Session> self);
  // Asks the session to close once no request is in flight (graceful shutdown). Must be called
  // on the session's executor.
  void drain();
  // Whether the connection may be closed to admit another at max_connections (any thread):
  // its client has not completed a message, or, with `unauthenticated` too, it has not
  // authenticated to an upstream that requires it. Claims it: true once per session.
  bool claim_for_eviction(bool unauthenticated) {
    const bool evictable = !spoke_.load(std::memory_order_relaxed) ||
                           (unauthenticated && unauthenticated_.load(std::memory_order_relaxed));
    return evictable && !claimed_.exchange(true, std::memory_order_relaxed);
  }
  // Closes a connection claimed above; on the session's executor.
  void close_evicted();
  // Updates unauthenticated_ after a request or a reply (on the session's executor).
  void note_authentication();
  boost::asio::any_io_executor executor() { return client_.get_executor(); }
  // A new topology snapshot (posted by the server on the session's executor): wakes a session
  // waiting for a writable server; a session pinned to a server that is no longer writable
  // finishes its reply in flight and closes, so the driver retries on a new connection.
  void on_topology(const std::shared_ptr<const cluster::Topology>& topology);

 private:
  using TimePoint = std::chrono::steady_clock::time_point;

  // The two directions of the relay. Either one ending ends the session (stop()), which ends the
  // other: its socket operations fail once the sockets are closed.
  // The TLS handshake (if configured), and selecting and connecting the upstream server;
  // false when the session cannot relay (the client was answered and closed).
  boost::asio::awaitable<bool> open();
  boost::asio::awaitable<void> client_to_upstream();
  // Spawned on its own: `self` keeps the session alive while it runs.
  boost::asio::awaitable<void> upstream_to_client(std::shared_ptr<Session> self);
  // Closes both connections (once); the relay's coroutines then end.
  void stop();
  // Reads until `in` holds a whole message and returns a view of it (valid until the next
  // call), or the read error. A declared length outside the limits throws ProtocolError.
  // `frame_started` is set while a partial message is buffered (for frame_timeout).
  boost::asio::awaitable<std::pair<boost::system::error_code, codec::Bytes>> next_message(
      Stream& stream, codec::InboundBuffer& in, TimePoint& frame_started);
  boost::asio::awaitable<void> write_client(codec::Bytes bytes);
  boost::asio::awaitable<void> write_upstream(codec::Bytes bytes);
  // Called by the io_context's SessionSweep every few hundred milliseconds: closes the session
  // when a message stalls mid-frame, the client idles past idle_timeout, or the upstream goes
  // silent past upstream_timeout with requests in flight. The per-message cost is only a clock
  // read, and an idle session holds no timer of its own.
  void check_timeouts(TimePoint now) override;
  // Whether the client has not completed a message within `limit` of its connection (0: none).
  bool never_spoke_past(TimePoint now, std::chrono::milliseconds limit) const {
    return limit.count() > 0 && !spoke_.load(std::memory_order_relaxed) &&
           now - accepted_at_ > limit;
  }
  // Selects a writable server (waiting up to serverSelectionTimeoutMS while there is none) and
  // connects to it; returns why it failed, or "". Sets *no_writable when the failure is that
  // no writable server was selectable in time.
  boost::asio::awaitable<std::string> select_and_connect(bool* no_writable);
  // Connects (and, if configured, starts TLS) to `server` (host:port); returns why it failed.
  boost::asio::awaitable<std::string> connect_upstream(const std::string& server);
  // Answers the client's requests with `code` until it leaves or goes quiet for connect_timeout,
  // or, with `only_first`, after one request.
  boost::asio::awaitable<void> refuse_requests(codec::ServerError code, const std::string& errmsg,
                                               bool only_first);
  // The upstream said the pinned server lost its role, or closed: close after this reply.
  void leave_server(const char* why);

  // Passes one request through the conversation and does what it says.
  boost::asio::awaitable<void> handle_request(codec::Bytes message);
  // Hand a request (with what became of it) or a reply to the recorder; called only while it
  // is active, so not recording costs the relay one atomic load per message.
  void record_request(codec::Bytes message, std::string_view verdict);
  void record_reply(codec::Bytes message);
  void protocol_error(const char* where, const codec::ProtocolError& e);
  // Counts `error` in its source's metric family.
  void count(const codec::Error& error);

  Stream client_;
  Stream upstream_;
  const SessionContext context_;
  const bool unix_socket_;  // no TCP_NODELAY, no TLS: the socket file's mode guards it
  std::string peer_;
  codec::InboundBuffer client_in_;
  codec::InboundBuffer upstream_in_;
  // The per-message policy (rewrites, pending replies, moreToCome); it keeps one scratch buffer
  // per direction, since each direction's coroutine may be suspended in a write while the
  // other runs.
  SessionHost host_;
  conversation::Conversation conversation_;
  std::unique_ptr<boost::asio::steady_timer> client_write_done_;  // made on first use
  bool client_writing_ = false;
  bool draining_ = false;
  TimePoint client_frame_started_{};    // zero when not inside a client message
  TimePoint upstream_frame_started_{};  // zero when not inside an upstream message
  TimePoint last_client_activity_{};
  TimePoint last_upstream_activity_{};
  const TimePoint accepted_at_;
  // Set once the client's first message is whole: before that the connection is "silent", and
  // limits.handshake_timeout and eviction at max_connections apply to it.
  std::atomic<bool> spoke_{false};
  // Whether, after its last request, an upstream that requires authentication had still not
  // seen this client authenticate (the conversation did not judge it).
  std::atomic<bool> unauthenticated_{false};
  std::atomic<bool> claimed_{false};  // chosen for eviction (claim_for_eviction)
  bool closed_ = false;
  recording::RecordingTap recording_tap_;  // this connection's part in the traffic recording
  // The upstream server this session is pinned to, and the writable-set generation then.
  std::string server_;
  std::string upstream_resolved_;  // server_'s address as connected (ip:port), for the recorder
  uint64_t generation_ = 0;
  bool leaving_ = false;
  // While waiting for a writable server: the wait's timer, which on_topology cancels.
  boost::asio::steady_timer* wake_ = nullptr;
};

}  // namespace docguard::proxy
