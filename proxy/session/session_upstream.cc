// Session: opening a connection (the client's TLS handshake, its first bytes) and choosing and
// connecting the upstream server, and leaving it on failover. The relay itself is in session.cc.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>

#include "docguard/codec/error_kinds.h"
#include "docguard/codec/server_errors.h"
#include "docguard/proxy/coroutines.h"
#include "docguard/proxy/failover.h"
#include "docguard/proxy/session.h"

namespace docguard::proxy {

using namespace asio::experimental::awaitable_operators;

awaitable<bool> Session::open() {
  if (!unix_socket_) {
    boost::system::error_code ec;
    client_.socket().set_option(tcp::no_delay(true), ec);
  }

  if (context_.tls.client_facing && !unix_socket_) {
    asio::steady_timer timer(client_.get_executor(), context_.config.connect_timeout);
    auto result = co_await (
        client_.start_tls(*context_.tls.client_facing, asio::ssl::stream_base::server, "") ||
        timer.async_wait(kUseTuple));
    if (result.index() == 1 || std::get<0>(result)) {
      const std::string why = result.index() == 1 ? "timed out" : std::get<0>(result).message();
      count({codec::ErrorKind::kTlsHandshake, codec::ErrorSource::kClient});
      spdlog::warn("closing connection from {}: TLS handshake failed: {}", peer_, why);
      client_.close();
      co_return false;
    }
    // With tls.ca_file the client's certificate was required and verified: its subject is the
    // connection's user (auth_watcher.h).
    if (std::string subject = client_.verified_peer_subject(); !subject.empty()) {
      conversation_.set_certificate_user(subject);
    }
  }

  // A plain client gets its upstream connection once it has sent something: one that never
  // speaks holds none (a TLS client has spoken by finishing its handshake).
  if (!client_.is_tls()) {
    auto [ec] = co_await client_.wait_first_bytes();
    if (ec || closed_) {
      client_.close();
      co_return false;
    }
  }
  bool no_writable = false;
  const std::string failure = co_await select_and_connect(&no_writable);
  context_.metrics.upstream_up.Set(failure.empty() ? 1 : 0);
  if (!failure.empty()) {
    if (no_writable) {
      spdlog::warn("no writable upstream server for client {}: {}", peer_, failure);
      co_await refuse_requests(codec::ServerError::kFailedToSatisfyReadPreference,
                               "docguard: " + failure, /*only_first=*/false);
    } else {
      spdlog::warn("upstream unreachable for client {}: {}", peer_, failure);
      // The first request (normally the hello) gets the reason instead of a bare reset.
      co_await refuse_requests(codec::ServerError::kHostUnreachable,
                               "docguard: upstream " + context_.router->uri().redacted +
                                   " is unreachable (" + failure + ")",
                               /*only_first=*/true);
    }
    client_.close();
    co_return false;
  }
  spdlog::debug("client {} connected, upstream {}", peer_, server_);
  last_client_activity_ = last_upstream_activity_ = std::chrono::steady_clock::now();
  co_return true;
}

awaitable<std::string> Session::select_and_connect(bool* no_writable) {
  Router& router = *context_.router;
  const auto& uri = router.uri();
  const auto started = std::chrono::steady_clock::now();
  const auto deadline = started + uri.server_selection_timeout;
  bool waited = false;
  std::string last_failure;
  const auto waited_seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  while (true) {
    const Router::Choice choice = router.select();
    if (!choice.server.empty()) {
      const std::string failure = co_await connect_upstream(choice.server);
      if (failure.empty()) {
        server_ = choice.server;
        generation_ = choice.generation;
        context_.metrics.upstream_connections(server_).Increment();
        if (waited) context_.metrics.selection_wait_seconds.Observe(waited_seconds());
        co_return std::string();
      }
      // A plain single upstream fails at once, as before docguard followed topologies; so does
      // a lone server the monitor reaches and this connection cannot (its TLS settings differ,
      // say): with nothing else to select, trying again would spin until the deadline.
      if (choice.seed_fallback || !router.in_cluster()) co_return failure;
      spdlog::info("client {}: upstream server {} failed ({}); selecting again", peer_,
                   choice.server, failure);
      router.suspect(choice.server);
      last_failure = failure;
      upstream_ = Stream(tcp::socket(client_.get_executor()));
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      context_.metrics.selection_failures.Increment();
      if (waited) context_.metrics.selection_wait_seconds.Observe(waited_seconds());
      *no_writable = true;
      co_return "no writable server in " + uri.redacted + " within serverSelectionTimeoutMS=" +
          std::to_string(uri.server_selection_timeout.count()) + " (topology " +
          std::string(cluster::to_string(router.snapshot()->type)) + ")" +
          (last_failure.empty() ? std::string() : "; last error: " + last_failure);
    }
    if (!waited) {
      waited = true;
      context_.metrics.selection_waits.Increment();
      spdlog::debug("client {} waits for a writable upstream server", peer_);
    }
    // Woken by on_topology; the short period also re-reads suspicions that expired.
    asio::steady_timer wake(client_.get_executor(),
                            std::min<std::chrono::steady_clock::duration>(
                                deadline - now, std::chrono::milliseconds(100)));
    wake_ = &wake;
    co_await wake.async_wait(kUseTuple);
    wake_ = nullptr;
  }
}

void Session::on_topology(const std::shared_ptr<const cluster::Topology>& topology) {
  if (wake_ != nullptr) {
    wake_->cancel();
    return;
  }
  if (server_.empty() || leaving_ || closed_) return;
  if (must_leave_server(*topology, server_, generation_)) {
    leave_server("is no longer writable");
  } else {
    generation_ = topology->primary_generation;
  }
}

void Session::leave_server(const char* why) {
  if (leaving_) return;
  leaving_ = true;
  spdlog::debug("client {}: upstream {} {}: closing after the reply in flight", peer_, server_,
                why);
  drain();
}

awaitable<std::string> Session::connect_upstream(const std::string& server) {
  const auto& c = context_.config;
  HostPort target;
  try {
    target = parse_host_port(server, "upstream server");
  } catch (const std::exception& e) {
    co_return std::string(e.what());
  }
  tcp::resolver resolver(client_.get_executor());
  auto [rec, endpoints] =
      co_await resolver.async_resolve(target.host, std::to_string(target.port), kUseTuple);
  if (rec) {
    count({codec::ErrorKind::kConnect, codec::ErrorSource::kUpstream});
    co_return "cannot resolve " + target.host + ": " + rec.message();
  }
  asio::steady_timer timer(client_.get_executor(), c.connect_timeout);
  auto result = co_await (asio::async_connect(upstream_.socket(), endpoints, kUseTuple) ||
                          timer.async_wait(kUseTuple));
  if (result.index() == 1) {
    count({codec::ErrorKind::kConnect, codec::ErrorSource::kUpstream});
    co_return "timed out connecting to " + server;
  }
  const auto [cec, ep] = std::get<0>(result);
  if (cec) {
    count({codec::ErrorKind::kConnect, codec::ErrorSource::kUpstream});
    co_return "cannot connect to " + server + ": " + cec.message();
  }
  // The address the name resolved to, as the recording's side file gives it.
  const std::string ip = ep.address().to_string();
  upstream_resolved_ =
      (ep.address().is_v6() ? "[" + ip + "]" : ip) + ":" + std::to_string(ep.port());
  boost::system::error_code ec;
  upstream_.socket().set_option(tcp::no_delay(true), ec);
  if (context_.tls.upstream) {
    const auto& t = context_.tls.upstream_settings;
    const std::string name = t.server_name.empty() ? target.host : t.server_name;
    timer.expires_after(c.connect_timeout);
    auto hs = co_await (upstream_.start_tls(*context_.tls.upstream, asio::ssl::stream_base::client,
                                            name, !t.allow_invalid_hostnames) ||
                        timer.async_wait(kUseTuple));
    if (hs.index() == 1 || std::get<0>(hs)) {
      count({codec::ErrorKind::kTlsHandshake, codec::ErrorSource::kUpstream});
      co_return "TLS handshake with " + server +
          " failed: " + (hs.index() == 1 ? std::string("timed out") : std::get<0>(hs).message());
    }
  }
  co_return std::string();
}

awaitable<void> Session::refuse_requests(codec::ServerError code, const std::string& errmsg,
                                         bool only_first) {
  // Each request gets `code` in its own reply family: drivers report it instead of hanging. A
  // client that sends nothing for a while is closed.
  while (true) {
    asio::steady_timer timer(client_.get_executor(), context_.config.connect_timeout);
    TimePoint started{};
    auto result =
        co_await (next_message(client_, client_in_, started) || timer.async_wait(kUseTuple));
    if (result.index() != 0 || std::get<0>(result).first) co_return;
    const auto refusal = conversation_.refuse(std::get<0>(result).second, code, errmsg);
    if (refusal.action == conversation::Conversation::RequestOutcome::Action::kReply) {
      auto [ec, n] =
          co_await client_.write_all(asio::buffer(refusal.bytes.data(), refusal.bytes.size()));
      if (ec) co_return;
    }
    if (only_first) co_return;
  }
}

}  // namespace docguard::proxy
