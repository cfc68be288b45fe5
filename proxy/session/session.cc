#include "docguard/proxy/session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <optional>
#include <tuple>

#include "docguard/base/structured_log.h"
#include "docguard/codec/error_kinds.h"
#include "docguard/codec/server_errors.h"
#include "docguard/proxy/coroutines.h"

namespace docguard::proxy {

using namespace asio::experimental::awaitable_operators;

namespace {

std::string endpoint_text(tcp::socket& s) {
  boost::system::error_code ec;
  auto ep = s.remote_endpoint(ec);
  if (ec) return "unknown";
  return ep.address().to_string() + ":" + std::to_string(ep.port());
}

}  // namespace

Session::Session(tcp::socket client, const SessionContext& context,
                 std::optional<UnixSocketClient> unix_client)
    : client_(std::move(client)),
      upstream_(tcp::socket(client_.get_executor())),
      context_(context),
      unix_socket_(unix_client.has_value()),
      peer_(unix_client ? std::move(unix_client->peer) : endpoint_text(client_.socket())),
      client_in_(context.config.max_message_bytes),
      // Replies may be as large as the server allows, whatever docguard's request limit.
      upstream_in_(std::max(context.config.max_message_bytes, codec::kDefaultMaxMessageBytes)),
      host_(context.metrics, context.request_ids),
      conversation_(context.engine, unix_client ? *unix_client->conversation : context.conversation,
                    peer_, host_),
      last_client_activity_(std::chrono::steady_clock::now()),
      last_upstream_activity_(last_client_activity_),
      accepted_at_(last_client_activity_) {
  context_.active_sessions.fetch_add(1);
  context_.metrics.connections_total.Increment();
  context_.metrics.connections_active.Increment();
}

Session::~Session() {
  if (recording_tap_.started && context_.recorder.active()) {
    context_.recorder.on_session_end(recording_tap_, peer_);
  }
  if (!server_.empty()) context_.metrics.upstream_connections(server_).Decrement();
  context_.active_sessions.fetch_sub(1);
  context_.metrics.connections_active.Decrement();
}

awaitable<void> Session::run(std::shared_ptr<Session> self) {
  // The relay's frames live as long as the connection: this one holds only `self` and what
  // the two awaits below need; the handshake's state lives in open()'s frame, gone by then.
  try {
    // Watched from the start: a client that never completes a message is closed at
    // handshake_timeout, in the TLS handshake, waiting for its first byte or for the upstream.
    const auto& c = context_.config;
    auto shortest = c.frame_timeout;
    if (c.idle_timeout.count() > 0) shortest = std::min(shortest, c.idle_timeout);
    if (c.upstream_timeout.count() > 0) shortest = std::min(shortest, c.upstream_timeout);
    if (c.handshake_timeout.count() > 0) shortest = std::min(shortest, c.handshake_timeout);
    SessionSweep::of(client_.get_executor())
        .add(*this, client_.get_executor(), SessionSweep::period_for(shortest));
    if (!co_await open()) co_return;
    // Two plain coroutines rather than a parallel group of them: what awaits both costs more
    // memory per connection than either direction does.
    asio::co_spawn(client_.get_executor(), upstream_to_client(self), asio::detached);
    co_await client_to_upstream();
  } catch (const std::exception& e) {
    spdlog::error("session ended by an unexpected error: {}", e.what());
  }
  stop();
}

void Session::stop() {
  if (closed_) return;
  closed_ = true;
  SessionSweep::of(client_.get_executor()).remove(*this);
  if (client_write_done_) client_write_done_->cancel();
  client_.close();
  upstream_.close();
  spdlog::debug("client {} closed", peer_);
}

void Session::note_authentication() {
  // A driver's monitoring connections never authenticate and send hellos only: they are left
  // alone, so an attacker's hellos cannot have them closed again and again. A client that has
  // sent anything else without authenticating can make room at max_connections.
  const std::string_view last = conversation_.request_command();
  const bool handshake_only = last == "hello" || last == "isMaster" || last == "ismaster";
  unauthenticated_.store(!conversation_.judges() && !handshake_only, std::memory_order_relaxed);
}

void Session::close_evicted() {
  if (closed_) return;
  count({codec::ErrorKind::kIdleTimeout, codec::ErrorSource::kClient});
  spdlog::info("closing connection from {}: {} at max_connections, to admit a new one", peer_,
               spoke_.load(std::memory_order_relaxed) ? "not authenticated" : "silent");
  stop();
}

void Session::drain() {
  draining_ = true;
  if (conversation_.outstanding() == 0) {
    client_.close();
  }
}

awaitable<std::pair<boost::system::error_code, codec::Bytes>> Session::next_message(
    Stream& stream, codec::InboundBuffer& in, TimePoint& frame_started) {
  while (true) {
    const codec::Bytes message = in.next_message();  // throws ProtocolError
    if (!message.empty()) {
      frame_started = in.pending() > 0 ? std::chrono::steady_clock::now() : TimePoint{};
      co_return std::pair{boost::system::error_code{}, message};
    }
    size_t n = 0;
    if (stream.is_tls()) {
      if (in.pending() == 0 && in.capacity() > codec::InboundBuffer::kIdleCapacity) {
        // After a large message: back to a small buffer so an idle connection stays small; the
        // large block waits as this thread's spare for the next large message.
        in.shrink();
      }
      // One read takes whatever the socket has: often the whole message, or several.
      const auto space = in.writable();
      auto [ec, got] = co_await stream.read_some(asio::buffer(space.data(), space.size()));
      if (ec) co_return std::pair{ec, codec::Bytes{}};
      n = got;
    } else {
      if (!in.last_read_filled()) {
        // The last read emptied the socket. Between messages the buffer goes back to the
        // thread (large blocks to its spare), and the wait for the next bytes holds none: an
        // idle connection costs no receive memory.
        in.release();
        auto [wait_ec] = co_await stream.wait_readable();
        if (wait_ec) co_return std::pair{wait_ec, codec::Bytes{}};
      }
      const auto space = in.writable();
      boost::system::error_code ec;
      n = stream.read_ready(asio::buffer(space.data(), space.size()), ec);
      if (ec == asio::error::would_block || ec == asio::error::try_again) {
        in.commit(0);  // nothing there after all: wait next time
        continue;
      }
      if (ec) co_return std::pair{ec, codec::Bytes{}};
    }
    in.commit(n);
    if (frame_started == TimePoint{}) frame_started = std::chrono::steady_clock::now();
  }
}

void Session::check_timeouts(TimePoint now) {
  const auto& c = context_.config;
  using codec::ErrorKind;
  using codec::ErrorSource;
  std::optional<codec::Error> error;
  if (client_frame_started_ != TimePoint{} && now - client_frame_started_ > c.frame_timeout) {
    error = {ErrorKind::kFrameTimeout, ErrorSource::kClient};
  } else if (upstream_frame_started_ != TimePoint{} &&
             now - upstream_frame_started_ > c.frame_timeout) {
    error = {ErrorKind::kFrameTimeout, ErrorSource::kUpstream};
  } else if (never_spoke_past(now, c.handshake_timeout) ||
             (c.idle_timeout.count() > 0 && conversation_.outstanding() == 0 &&
              client_frame_started_ == TimePoint{} &&
              now - last_client_activity_ > c.idle_timeout)) {
    // Idle, or never completed a message within handshake_timeout: both count as idle.
    error = {ErrorKind::kIdleTimeout, ErrorSource::kClient};
  } else if (c.upstream_timeout.count() > 0 && conversation_.outstanding() > 0 &&
             now - std::max(last_upstream_activity_, last_client_activity_) > c.upstream_timeout) {
    error = {ErrorKind::kSilent, ErrorSource::kUpstream};
  }
  if (!error) return;
  count(*error);
  spdlog::warn("closing connection from {}: {}", peer_, codec::log_name(*error));
  stop();
}

awaitable<void> Session::write_client(codec::Bytes bytes) {
  // Both directions may answer the client (relayed replies, replies docguard makes itself):
  // one write at a time so messages never interleave.
  while (client_writing_) {
    // Made on first use: most sessions never have both directions writing at once.
    if (!client_write_done_) {
      client_write_done_ = std::make_unique<asio::steady_timer>(client_.get_executor());
    }
    client_write_done_->expires_at(asio::steady_timer::time_point::max());
    co_await client_write_done_->async_wait(kUseTuple);
    if (closed_) co_return;
  }
  boost::system::error_code ec;
  const size_t sent = client_.write_ready(asio::buffer(bytes.data(), bytes.size()), ec);
  if (sent < bytes.size() && (!ec || ec == asio::error::would_block)) {
    client_writing_ = true;
    std::tie(ec, std::ignore) =
        co_await client_.write_all(asio::buffer(bytes.data() + sent, bytes.size() - sent));
    client_writing_ = false;
    if (client_write_done_) client_write_done_->cancel();
  }
  if (ec && ec != asio::error::would_block) throw boost::system::system_error(ec);
}

awaitable<void> Session::write_upstream(codec::Bytes bytes) {
  // Only this direction writes upstream, so no turn to wait for.
  boost::system::error_code ec;
  const size_t sent = upstream_.write_ready(asio::buffer(bytes.data(), bytes.size()), ec);
  if (sent < bytes.size() && (!ec || ec == asio::error::would_block)) {
    std::tie(ec, std::ignore) =
        co_await upstream_.write_all(asio::buffer(bytes.data() + sent, bytes.size() - sent));
  }
  if (ec && ec != asio::error::would_block) throw boost::system::system_error(ec);
  context_.metrics.add_client_bytes(bytes.size());
}

void Session::count(const codec::Error& error) {
  // Each source has its family; docguard's own failures are logged only.
  switch (error.source) {
    case codec::ErrorSource::kClient:
      context_.metrics.protocol_errors.get(codec::metric_label(error)).Increment();
      break;
    case codec::ErrorSource::kUpstream:
      context_.metrics.upstream_errors.get(codec::metric_label(error)).Increment();
      break;
    case codec::ErrorSource::kDocguard:
    case codec::ErrorSource::kConfiguration:
      break;
  }
}

void Session::protocol_error(const char* where, const codec::ProtocolError& e) {
  count({e.kind(), codec::ErrorSource::kClient});
  spdlog::warn("closing connection from {} ({}): {}: {}", peer_, where, codec::name(e.kind()),
               e.what());
}

void SessionHost::on_compressed_request(codec::Compressor compressor) {
  metrics_.compressed_messages.get(codec::compressor_name(compressor)).Increment();
}

void SessionHost::on_inspected(double seconds) { metrics_.observe_inspection(seconds); }

void SessionHost::on_blocked() { metrics_.messages_blocked.Increment(); }

void SessionHost::on_unacknowledged_reply_dropped(int32_t response_to) {
  spdlog::debug("dropped the upstream's reply to unacknowledged request {}", response_to);
}

awaitable<void> Session::client_to_upstream() {
  try {
    while (true) {
      if (draining_ && conversation_.outstanding() == 0) co_return;
      auto [ec, message] = co_await next_message(client_, client_in_, client_frame_started_);
      if (ec) {
        // After stop() (a timeout, the upstream side ending) the client did not leave.
        if (client_in_.pending() > 0 && !closed_) {
          // Gone in the middle of a message: nothing of it was forwarded.
          count({codec::ErrorKind::kTruncatedFrame, codec::ErrorSource::kClient});
          spdlog::info("client {} disconnected in the middle of a message", peer_);
        }
        co_return;
      }
      last_client_activity_ = std::chrono::steady_clock::now();
      if (!spoke_.load(std::memory_order_relaxed)) spoke_.store(true, std::memory_order_relaxed);
      co_await handle_request(message);
      note_authentication();
      conversation_.release_request_buffer();
    }
  } catch (const codec::ProtocolError& e) {
    protocol_error("request", e);
  } catch (const boost::system::system_error& e) {
    spdlog::debug("client {}: {}", peer_, e.what());
  }
}

awaitable<void> Session::handle_request(codec::Bytes message) {
  const auto outcome = conversation_.on_request(message);
  if (spdlog::should_log(spdlog::level::debug)) {
    // The request's line: what it is and, when the driver traces it, its trace (both bounded
    // by the conversation), so a trace can be followed through docguard's log.
    log::Fields fields;
    fields.add("client", peer_).add("command", conversation_.request_command());
    if (!conversation_.request_traceparent().empty()) {
      fields.add("traceparent", conversation_.request_traceparent());
    }
    spdlog::debug("{}", fields.message("request"));
  }
  using Action = conversation::Conversation::RequestOutcome::Action;
  if (context_.recorder.active()) {
    record_request(message, outcome.action == Action::kForward ? "forwarded"
                            : outcome.action == Action::kReply ? "answered_by_docguard"
                                                               : "nothing");
    // docguard's own answer is the reply the client gets: recorded as that.
    if (outcome.action == Action::kReply) record_reply(outcome.bytes);
  }
  switch (outcome.action) {
    case Action::kForward:
      co_await write_upstream(outcome.bytes);
      break;
    case Action::kReply:
      co_await write_client(outcome.bytes);
      break;
    case Action::kNothing:
      break;
  }
}

awaitable<void> Session::upstream_to_client(std::shared_ptr<Session> self) {
  // Every way out reaches stop() below: no co_return in here.
  try {
    while (true) {
      auto [ec, message] = co_await next_message(upstream_, upstream_in_, upstream_frame_started_);
      if (ec) {
        // Closed means the client side ended first (or a timeout): the upstream did not close.
        if (!closed_ && ec != asio::error::operation_aborted) {
          count({codec::ErrorKind::kClosed, codec::ErrorSource::kUpstream});
          spdlog::info("upstream closed the connection of client {} (server {})", peer_, server_);
          // A server that closes connections may be going away: the monitor checks now.
          context_.router->suspect(server_);
        }
        break;
      }
      last_upstream_activity_ = std::chrono::steady_clock::now();
      context_.metrics.add_upstream_bytes(message.size());
      const auto outcome = conversation_.on_reply(message);
      note_authentication();  // the reply that confirms an authentication
      const conversation::ReplySignals signals = outcome.signals;
      // The upstream's reply as it came: what the cluster answered, before any rewrite.
      if (!outcome.drop && context_.recorder.active()) record_reply(message);
      if (!outcome.drop) co_await write_client(outcome.bytes);
      conversation_.release_reply_buffer();
      if (signals.state_change) {
        // The driver retries on a new connection, which goes to the server the monitor finds
        // writable; this server is avoided until the monitor has re-checked it.
        context_.router->suspect(server_);
        leave_server(*signals.state_change == codec::ServerError::kShutdownInProgress
                         ? "is shutting down"
                         : "is no longer primary");
      } else if (signals.hello_not_writable && context_.router->in_cluster()) {
        // A demoted primary answering a driver's heartbeat: the driver hears it, and its next
        // check goes through a new connection to the new primary instead of this one again.
        context_.router->suspect(server_);
        leave_server("says it is not writable");
      }
      if (draining_ && conversation_.outstanding() == 0) {
        client_.close();
        break;
      }
    }
  } catch (const codec::ProtocolError& e) {
    count({e.kind(), codec::ErrorSource::kUpstream});
    spdlog::error("closing connection of client {}: malformed upstream reply: {}: {}", peer_,
                  codec::name(e.kind()), e.what());
  } catch (const boost::system::system_error& e) {
    spdlog::debug("client {}: {}", peer_, e.what());
  } catch (const std::exception& e) {
    spdlog::error("session ended by an unexpected error: {}", e.what());
  }
  self->stop();
}

}  // namespace docguard::proxy
