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
#include <boost/asio/read.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "docguard/codec/message.h"
#include "docguard/proxy/runtime.h"
#include "docguard/proxy/session.h"
#include "docguard/rules/rule_set.h"
#include "docguard/settings/yaml_settings.h"

namespace docguard::proxy {

// One whole wire message from `s` (header first, then the length it declares); empty and `ec`
// set when the read fails or the peer closes.
inline std::vector<uint8_t> read_message(boost::asio::ip::tcp::socket& s,
                                         boost::system::error_code& ec) {
  namespace asio = boost::asio;
  std::vector<uint8_t> out(4);
  asio::read(s, asio::buffer(out), ec);
  if (ec) return {};
  const auto len = static_cast<size_t>(codec::load_le32(out.data()));
  out.resize(len);
  asio::read(s, asio::buffer(out.data() + 4, len - 4), ec);
  return out;
}

struct SessionOnLoopback {
  SessionOnLoopback(uint16_t upstream_port, ProxyConfig config, std::chrono::seconds client_timeout)
      : runtime(for_upstream(std::move(config), upstream_port)) {
    namespace asio = boost::asio;
    using asio::ip::tcp;
    runtime.router = std::make_unique<Router>(runtime.config.upstream, nullptr);
    tcp::acceptor acceptor(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    client.connect(acceptor.local_endpoint());
    timeval tv{static_cast<time_t>(client_timeout.count()), 0};
    setsockopt(client.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    tcp::socket accepted(ioc);
    acceptor.accept(accepted);
    auto session = std::make_shared<Session>(std::move(accepted), session_context(runtime));
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
    c.rules = settings::parse_rules(YAML::Node(), "<defaults>");
    c.connect_timeout = std::chrono::milliseconds(2000);
    return c;
  }

  ProxyRuntime runtime;
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket client{ioc};
  std::thread thread;
};

}  // namespace docguard::proxy
