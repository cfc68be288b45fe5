// Session timeouts (frame_timeout, idle_timeout, upstream_timeout), checked by the io_context's
// SessionSweep: each closes the client connection and the session's own upstream connection and
// is counted; a client that keeps talking is not closed; either side closing ends the session,
// which leaves the sweep.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <thread>

#include "docguard/codec/error_kinds.h"
#include "docguard/codec/op_msg.h"
#include "docguard/proxy/runtime.h"
#include "docguard/proxy/session.h"
#include "docguard/rules/rule_set.h"
#include "session_on_loopback.h"

namespace docguard::proxy {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using std::chrono::milliseconds;

std::vector<uint8_t> ping(int32_t id) {
  codec::OwnedBson doc;
  BSON_APPEND_INT32(doc.get(), "ping", 1);
  BSON_APPEND_UTF8(doc.get(), "$db", "admin");
  return codec::OpMsgBuilder(id, 0).body(doc.get()).finish();
}

// Upstream that answers `ping` with {ok: 1} (kAnswers), never answers (kSilent), or sends the
// first half of its reply and closes the connection (kHalfThenClose), and notes when the proxy
// closes the connection.
enum class Behaviour { kAnswers, kSilent, kHalfThenClose };

class Upstream {
 public:
  explicit Upstream(Behaviour behaviour)
      : acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    thread_ = std::thread([this, behaviour] {
      boost::system::error_code ec;
      tcp::socket s(ioc_);
      acceptor_.accept(s, ec);
      if (ec) return;
      while (true) {
        auto request = read_message(s, ec);
        if (ec) break;
        if (behaviour == Behaviour::kSilent) continue;
        codec::OwnedBson ok;
        BSON_APPEND_DOUBLE(ok.get(), "ok", 1.0);
        BSON_APPEND_UTF8(ok.get(), "pad", std::string(4000, 'p').c_str());
        const auto reply = codec::OpMsgBuilder(1000, codec::read_header(request.data()).request_id)
                               .body(ok.get())
                               .finish();
        if (behaviour == Behaviour::kHalfThenClose) {
          asio::write(s, asio::buffer(reply.data(), reply.size() / 2), ec);
          std::this_thread::sleep_for(milliseconds(50));
          return;  // the socket closes
        }
        asio::write(s, asio::buffer(reply), ec);
      }
      closed_by_proxy_ = ec == asio::error::eof || ec == asio::error::connection_reset;
    });
  }
  ~Upstream() {
    boost::system::error_code ec;
    acceptor_.close(ec);
    wait_closed();
  }
  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  bool closed_by_proxy() const { return closed_by_proxy_; }
  void wait_closed() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  std::thread thread_;
  std::atomic<bool> closed_by_proxy_{false};
};

struct Harness : SessionOnLoopback {
  Harness(uint16_t upstream_port, ProxyConfig config)
      : SessionOnLoopback(upstream_port, std::move(config), std::chrono::seconds(5)) {}
  // Seconds until the proxy closes the client connection (eof or reset), or -1 if it did not
  // within the receive timeout. EINTR is not an end: a signal may interrupt the blocking
  // receive, and Asio's synchronous read reports it.
  double seconds_until_closed() {
    const auto started = std::chrono::steady_clock::now();
    std::vector<uint8_t> buf(64);
    boost::system::error_code ec;
    while (!ec || ec == asio::error::interrupted) {
      ec = {};
      client.read_some(asio::buffer(buf), ec);
    }
    if (ec != asio::error::eof && ec != asio::error::connection_reset) return -1;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
  double protocol_errors(const char* kind) {
    return runtime.metrics.protocol_errors.get(kind).Value();
  }
};

ProxyConfig limits(milliseconds frame, milliseconds idle, milliseconds upstream) {
  ProxyConfig c;
  c.frame_timeout = frame;
  c.idle_timeout = idle;
  c.upstream_timeout = upstream;
  return c;
}

TEST(SessionTimeouts, StalledFrameClosesClientAndUpstream) {
  Upstream upstream(Behaviour::kAnswers);
  Harness h(upstream.port(), limits(milliseconds(300), milliseconds(0), milliseconds(0)));
  const auto request = ping(1);
  asio::write(h.client, asio::buffer(request.data(), 10));  // part of a header, then nothing
  const double after = h.seconds_until_closed();
  EXPECT_GE(after, 0.25);
  EXPECT_LT(after, 2.0);
  upstream.wait_closed();
  EXPECT_TRUE(upstream.closed_by_proxy());
  EXPECT_EQ(h.protocol_errors("client_frame_timeout"), 1);
  // docguard closed it: the client did not leave in the middle of a message.
  EXPECT_EQ(h.protocol_errors("truncated_frame"), 0);
}

TEST(SessionTimeouts, IdleClientIsClosedAfterIdleTimeout) {
  Upstream upstream(Behaviour::kAnswers);
  Harness h(upstream.port(), limits(milliseconds(30000), milliseconds(300), milliseconds(0)));
  boost::system::error_code ec;
  asio::write(h.client, asio::buffer(ping(1)), ec);
  ASSERT_FALSE(read_message(h.client, ec).empty()) << ec.message();
  const double after = h.seconds_until_closed();
  EXPECT_GE(after, 0.25);
  EXPECT_LT(after, 2.0);
  upstream.wait_closed();
  EXPECT_TRUE(upstream.closed_by_proxy());
  EXPECT_EQ(h.protocol_errors("idle_timeout"), 1);
}

TEST(SessionTimeouts, ClientThatKeepsTalkingIsNotIdle) {
  Upstream upstream(Behaviour::kAnswers);
  Harness h(upstream.port(), limits(milliseconds(30000), milliseconds(400), milliseconds(0)));
  boost::system::error_code ec;
  for (int32_t id = 1; id <= 8; ++id) {  // about 1.2 s, three idle timeouts
    asio::write(h.client, asio::buffer(ping(id)), ec);
    const auto reply = read_message(h.client, ec);
    ASSERT_FALSE(ec) << id << ": " << ec.message();
    EXPECT_EQ(codec::read_header(reply.data()).response_to, id);
    std::this_thread::sleep_for(milliseconds(150));
  }
  EXPECT_EQ(h.protocol_errors("idle_timeout"), 0);
}

TEST(SessionTimeouts, SilentUpstreamWithARequestInFlightIsClosed) {
  Upstream upstream(Behaviour::kSilent);
  Harness h(upstream.port(), limits(milliseconds(30000), milliseconds(0), milliseconds(300)));
  const double before = h.runtime.metrics.upstream_errors.get("timeout").Value();
  boost::system::error_code ec;
  asio::write(h.client, asio::buffer(ping(1)), ec);
  const double after = h.seconds_until_closed();
  EXPECT_GE(after, 0.25);
  EXPECT_LT(after, 2.0);
  upstream.wait_closed();
  EXPECT_TRUE(upstream.closed_by_proxy());
  EXPECT_EQ(h.runtime.metrics.upstream_errors.get("timeout").Value(), before + 1);
  // Closing the upstream side itself is not counted as the upstream closing.
  EXPECT_EQ(h.runtime.metrics.upstream_errors.get("closed").Value(), 0);
}

TEST(SessionTimeouts, UpstreamClosingMidReplyClosesTheClient) {
  Upstream upstream(Behaviour::kHalfThenClose);
  Harness h(upstream.port(), limits(milliseconds(30000), milliseconds(0), milliseconds(0)));
  boost::system::error_code ec;
  asio::write(h.client, asio::buffer(ping(1)), ec);
  // The half reply is not forwarded, and the client learns at once.
  std::vector<uint8_t> got(8192);
  size_t n = 0;
  while (!ec || ec == asio::error::interrupted) {
    ec = {};
    n += h.client.read_some(asio::buffer(got.data() + n, got.size() - n), ec);
  }
  EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(h.runtime.metrics.upstream_errors.get("closed").Value(), 1);
}

TEST(SessionTimeouts, ClientLeavingEndsTheSessionAndItsSweep) {
  Upstream upstream(Behaviour::kAnswers);
  // A sweep period of seconds: the io thread must still stop at once when the session ends.
  Harness h(upstream.port(), limits(milliseconds(30000), milliseconds(20000), milliseconds(0)));
  boost::system::error_code ec;
  asio::write(h.client, asio::buffer(ping(1)), ec);
  ASSERT_FALSE(read_message(h.client, ec).empty()) << ec.message();
  const auto started = std::chrono::steady_clock::now();
  h.client.close(ec);
  h.thread.join();  // ioc.run() returns: no timer or coroutine of the session is left
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
  h.thread = std::thread([] {});
  upstream.wait_closed();
  EXPECT_TRUE(upstream.closed_by_proxy());
  EXPECT_EQ(h.runtime.metrics.upstream_errors.get("closed").Value(), 0);
}

}  // namespace
}  // namespace docguard::proxy
