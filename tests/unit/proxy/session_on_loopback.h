// A Session between a loopback client socket and an upstream on a given port, run on its own io
// thread: the fixture of the session tests (failover, timeouts). The client socket gives up
// reading after `client_timeout`, so a connection that stays open when it should close fails
// the test instead of hanging it.
#pragma once

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "docguard/proxy/runtime.h"
#include "docguard/proxy/session.h"
#include "docguard/rules/rule_set.h"

namespace docguard::proxy {

struct SessionOnLoopback {
  SessionOnLoopback(uint16_t upstream_port, ProxyConfig config, std::chrono::seconds client_timeout)
      : runtime(for_upstream(std::move(config), upstream_port)) {
    namespace asio = boost::asio;
    using asio::ip::tcp;
    runtime.router = std::make_unique<Router>(runtime.config.upstream_cluster, nullptr);
    tcp::acceptor acceptor(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    client.connect(acceptor.local_endpoint());
    timeval tv{static_cast<time_t>(client_timeout.count()), 0};
    setsockopt(client.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    tcp::socket accepted(ioc);
    acceptor.accept(accepted);
    auto session = std::make_shared<Session>(std::move(accepted), runtime);
    asio::co_spawn(
        ioc, [session]() -> asio::awaitable<void> { co_await session->run(session); },
        asio::detached);
    thread = std::thread([this] { ioc.run(); });
  }
  ~SessionOnLoopback() {
    boost::system::error_code ec;
    client.close(ec);
    thread.join();
  }
  // `c` pointed at the upstream, with default rules and a 2 s connect timeout.
  static ProxyConfig for_upstream(ProxyConfig c, uint16_t port) {
    set_upstream(c, "mongodb://127.0.0.1:" + std::to_string(port));
    c.rules = rules::parse_rules(YAML::Node(), "<defaults>");
    c.connect_timeout = std::chrono::milliseconds(2000);
    return c;
  }

  ProxyRuntime runtime;
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket client{ioc};
  std::thread thread;
};

}  // namespace docguard::proxy
