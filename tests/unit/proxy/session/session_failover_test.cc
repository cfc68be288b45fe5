// A session on loopback sockets in front of a fake upstream: a reply that says the server lost
// its role reaches the client, then the client connection closes (the driver retries on a new
// one); an ordinary reply keeps the connection open. No monitor: the session dials the URI's only
// seed, as in front of a plain single host.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <thread>

#include "docguard/codec/op_msg.h"
#include "docguard/proxy/runtime.h"
#include "docguard/proxy/session.h"
#include "docguard/rules/rule_set.h"
#include "session_on_loopback.h"

namespace docguard::proxy {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

std::vector<uint8_t> op_msg(int32_t id, int32_t response_to, const char* json) {
  bson_error_t err;
  codec::OwnedBson doc(bson_new_from_json(reinterpret_cast<const uint8_t*>(json), -1, &err));
  return codec::OpMsgBuilder(id, response_to).body(doc.get()).finish();
}

// Fake upstream: answers each request with the next canned body, in order.
class FakeUpstream {
 public:
  explicit FakeUpstream(std::vector<const char*> replies)
      : acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)),
        replies_(std::move(replies)) {
    thread_ = std::thread([this] {
      boost::system::error_code ec;
      tcp::socket s(ioc_);
      acceptor_.accept(s, ec);
      if (ec) return;
      for (const char* body : replies_) {
        auto request = read_message(s, ec);
        if (ec) return;
        const auto reply = op_msg(1000, codec::read_header(request.data()).request_id, body);
        asio::write(s, asio::buffer(reply), ec);
      }
      std::vector<uint8_t> rest(16);
      s.read_some(asio::buffer(rest), ec);  // until the proxy closes
      closed_by_proxy_ = ec == asio::error::eof || ec == asio::error::connection_reset;
    });
  }
  ~FakeUpstream() {
    boost::system::error_code ec;
    acceptor_.close(ec);
    thread_.join();
  }
  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  bool closed_by_proxy() const { return closed_by_proxy_; }

 private:
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  std::vector<const char*> replies_;
  std::thread thread_;
  std::atomic<bool> closed_by_proxy_{false};
};

struct Harness : SessionOnLoopback {
  explicit Harness(uint16_t upstream_port)
      : SessionOnLoopback(upstream_port, ProxyConfig{}, std::chrono::seconds(3)) {}
  bson_iter_t field(const std::vector<uint8_t>& reply, const char* key) {
    parsed = codec::OpMsg::parse(reply);
    bson_t b = parsed.body.borrow();
    bson_iter_t it;
    EXPECT_TRUE(bson_iter_init_find(&it, &b, key)) << key;
    return it;
  }

  codec::OpMsg parsed;
};

TEST(SessionFailover, NotWritablePrimaryReplyIsForwardedThenTheConnectionCloses) {
  FakeUpstream upstream({R"({"ok": 1, "n": 1})",
                         R"({"ok": 0, "code": 10107, "codeName": "NotWritablePrimary",
                             "errorLabels": ["RetryableWriteError"]})",
                         R"({"ok": 1, "n": 1})"});
  Harness h(upstream.port());
  boost::system::error_code ec;
  // An ordinary reply: the connection stays.
  asio::write(h.client, asio::buffer(op_msg(1, 0, R"({"insert": "c", "$db": "t"})")), ec);
  auto reply = read_message(h.client, ec);
  ASSERT_FALSE(ec) << ec.message();
  auto it = h.field(reply, "n");
  EXPECT_EQ(bson_iter_as_int64(&it), 1);
  // The state-change reply reaches the client intact...
  asio::write(h.client, asio::buffer(op_msg(2, 0, R"({"insert": "c", "$db": "t"})")), ec);
  reply = read_message(h.client, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(codec::read_header(reply.data()).response_to, 2);
  it = h.field(reply, "code");
  EXPECT_EQ(bson_iter_as_int64(&it), 10107);
  // ...and then the connection closes: nothing more is read or forwarded.
  std::vector<uint8_t> more(16);
  h.client.read_some(asio::buffer(more), ec);
  EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();
}

TEST(SessionFailover, WriteConcernErrorShutdownInProgressAlsoCloses) {
  FakeUpstream upstream({R"({"ok": 1, "n": 1, "writeConcernError": {"code": 91,
                             "codeName": "ShutdownInProgress", "errmsg": "shutting down"}})"});
  Harness h(upstream.port());
  boost::system::error_code ec;
  asio::write(h.client, asio::buffer(op_msg(7, 0, R"({"insert": "c", "$db": "t"})")), ec);
  auto reply = read_message(h.client, ec);
  ASSERT_FALSE(ec) << ec.message();
  auto it = h.field(reply, "n");
  EXPECT_EQ(bson_iter_as_int64(&it), 1);  // the write's own result is not hidden
  std::vector<uint8_t> more(16);
  h.client.read_some(asio::buffer(more), ec);
  EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();
}

TEST(SessionFailover, OrdinaryErrorsKeepTheConnection) {
  FakeUpstream upstream(
      {R"({"ok": 0, "code": 11000, "codeName": "DuplicateKey"})", R"({"ok": 1})"});
  Harness h(upstream.port());
  boost::system::error_code ec;
  for (int32_t id : {1, 2}) {
    asio::write(h.client, asio::buffer(op_msg(id, 0, R"({"insert": "c", "$db": "t"})")), ec);
    auto reply = read_message(h.client, ec);
    ASSERT_FALSE(ec) << id << ": " << ec.message();
    EXPECT_EQ(codec::read_header(reply.data()).response_to, id);
  }
}

}  // namespace
}  // namespace docguard::proxy
