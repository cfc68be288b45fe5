// Stream reads on plain TCP (readiness_poller.h in an epoll build): bytes that are already there
// and bytes that come later are both delivered, a buffer filled to the brim is followed by the
// rest, end of stream is reported, and a pending read ends with operation_aborted when the
// stream is closed or the read is cancelled. Direct sends (write_ready) send a small message
// whole, stop at a full socket (write_all sends the rest) and report a reset peer.
#include "docguard/proxy/stream.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace docguard::proxy {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace asio::experimental::awaitable_operators;
using std::chrono::milliseconds;
constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);

// A connected pair of loopback sockets on `ioc`: {the stream's side, the peer}.
std::pair<tcp::socket, tcp::socket> socket_pair(asio::io_context& ioc) {
  tcp::acceptor acceptor(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  tcp::socket a(ioc), b(ioc);
  a.connect(acceptor.local_endpoint());
  acceptor.accept(b);
  return {std::move(a), std::move(b)};
}

// Runs `body` as a coroutine on `ioc` to completion (or fails the test after 5 s).
template <typename F>
void run(asio::io_context& ioc, F body) {
  bool done = false;
  asio::co_spawn(ioc, std::move(body), [&](std::exception_ptr e) {
    done = true;
    if (e) std::rethrow_exception(e);
  });
  ioc.run_for(std::chrono::seconds(5));
  EXPECT_TRUE(done) << "the reads did not finish";
}

TEST(Stream, ReadsBytesAlreadyThereAndBytesThatComeLater) {
  asio::io_context ioc;
  auto [mine, peer] = socket_pair(ioc);
  Stream stream(std::move(mine));
  asio::write(peer, asio::buffer(std::string("early")));
  run(ioc, [&]() -> asio::awaitable<void> {
    char buf[64];
    auto [ec, n] = co_await stream.read_some(asio::buffer(buf));
    EXPECT_FALSE(ec);
    EXPECT_EQ(std::string(buf, n), "early");
    // Nothing there now: the next read waits, and the peer writes a little later.
    asio::steady_timer later(ioc, milliseconds(20));
    later.async_wait([&](auto) { asio::write(peer, asio::buffer(std::string("late"))); });
    std::tie(ec, n) = co_await stream.read_some(asio::buffer(buf));
    EXPECT_FALSE(ec);
    EXPECT_EQ(std::string(buf, n), "late");
  });
}

TEST(Stream, AFullBufferIsFollowedByTheRest) {
  asio::io_context ioc;
  auto [mine, peer] = socket_pair(ioc);
  Stream stream(std::move(mine));
  asio::write(peer, asio::buffer(std::string("0123456789")));
  run(ioc, [&]() -> asio::awaitable<void> {
    char buf[4];
    std::string got;
    while (got.size() < 10) {
      auto [ec, n] = co_await stream.read_some(asio::buffer(buf));
      EXPECT_FALSE(ec);
      if (ec) co_return;
      got.append(buf, n);
    }
    EXPECT_EQ(got, "0123456789");
  });
}

TEST(Stream, ReportsEndOfStream) {
  asio::io_context ioc;
  auto [mine, peer] = socket_pair(ioc);
  Stream stream(std::move(mine));
  run(ioc, [&]() -> asio::awaitable<void> {
    asio::steady_timer later(ioc, milliseconds(20));
    later.async_wait([&](auto) { peer.close(); });
    char buf[16];
    auto [ec, n] = co_await stream.read_some(asio::buffer(buf));
    EXPECT_EQ(ec, asio::error::eof);
    EXPECT_EQ(n, 0u);
  });
}

TEST(Stream, ClosingEndsAPendingRead) {
  asio::io_context ioc;
  auto [mine, peer] = socket_pair(ioc);
  Stream stream(std::move(mine));
  run(ioc, [&]() -> asio::awaitable<void> {
    asio::steady_timer later(ioc, milliseconds(20));
    later.async_wait([&](auto) { stream.close(); });
    char buf[16];
    auto [ec, n] = co_await stream.read_some(asio::buffer(buf));
    EXPECT_TRUE(ec == asio::error::operation_aborted || ec == asio::error::eof) << ec.message();
    EXPECT_EQ(n, 0u);
  });
}

TEST(Stream, ACancelledReadEndsAndTheStreamStillReads) {
  asio::io_context ioc;
  auto [mine, peer] = socket_pair(ioc);
  Stream stream(std::move(mine));
  run(ioc, [&]() -> asio::awaitable<void> {
    char buf[16];
    asio::steady_timer timeout(ioc, milliseconds(20));
    // The timer wins: the read is cancelled (as a session's watchdog or drain cancels it).
    auto result = co_await (stream.read_some(asio::buffer(buf)) || timeout.async_wait(kUseTuple));
    EXPECT_EQ(result.index(), 1u);
    asio::write(peer, asio::buffer(std::string("after")));
    auto [ec, n] = co_await stream.read_some(asio::buffer(buf));
    EXPECT_FALSE(ec);
    EXPECT_EQ(std::string(buf, n), "after");
  });
}

TEST(Stream, ManyStreamsOnOneThreadEachGetTheirOwnBytes) {
  asio::io_context ioc;
  constexpr int kStreams = 20;
  std::vector<Stream> streams;
  std::vector<tcp::socket> peers;
  for (int i = 0; i < kStreams; ++i) {
    auto [mine, peer] = socket_pair(ioc);
    streams.emplace_back(std::move(mine));
    peers.push_back(std::move(peer));
  }
  int finished = 0;
  for (int i = 0; i < kStreams; ++i) {
    asio::co_spawn(
        ioc,
        [&, i]() -> asio::awaitable<void> {
          char buf[32];
          for (int round = 0; round < 3; ++round) {
            auto [ec, n] = co_await streams[static_cast<size_t>(i)].read_some(asio::buffer(buf));
            EXPECT_FALSE(ec);
            EXPECT_EQ(std::string(buf, n), std::to_string(i) + "/" + std::to_string(round));
            // The reply lets the peer send the next round (request/response, as a relay sees).
            co_await streams[static_cast<size_t>(i)].write_all(asio::buffer("k", 1));
          }
          ++finished;
        },
        asio::detached);
  }
  std::thread peers_thread([&] {
    for (int round = 0; round < 3; ++round) {
      for (int i = 0; i < kStreams; ++i) {
        auto& p = peers[static_cast<size_t>(i)];
        asio::write(p, asio::buffer(std::to_string(i) + "/" + std::to_string(round)));
      }
      for (auto& p : peers) {
        char k;
        asio::read(p, asio::buffer(&k, 1));
      }
    }
  });
  ioc.run_for(std::chrono::seconds(5));
  peers_thread.join();
  EXPECT_EQ(finished, kStreams);
}

TEST(Stream, WriteReadySendsASmallMessageWhole) {
  asio::io_context ioc;
  auto [mine, peer] = socket_pair(ioc);
  Stream stream(std::move(mine));
  boost::system::error_code ec;
  const std::string message = "a small message";
  EXPECT_EQ(stream.write_ready(asio::buffer(message), ec), message.size());
  EXPECT_FALSE(ec);
  std::string got(message.size(), '\0');
  asio::read(peer, asio::buffer(got.data(), got.size()));
  EXPECT_EQ(got, message);
}

TEST(Stream, WriteReadyStopsAtAFullSocketAndWriteAllSendsTheRest) {
  asio::io_context ioc;
  auto [mine, peer] = socket_pair(ioc);
  Stream stream(std::move(mine));
  // More than the socket's send buffer and the peer's receive buffer hold while the peer reads
  // nothing, at their largest (net.ipv4.tcp_wmem and tcp_rmem: 4 MiB and 6 MiB by default).
  // (A small SO_SNDBUF would make the rest crawl: each few KiB waits for a delayed ACK.)
  std::vector<uint8_t> big(32 * 1024 * 1024);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 7);
  // The kernel may take more on a second try (the peer's receive window grows), but sooner or
  // later the socket is full: that is would_block with nothing sent, never an error.
  boost::system::error_code ec;
  size_t sent = 0;
  for (int tries = 0; tries < 1000 && !ec; ++tries) {
    const size_t n = stream.write_ready(asio::buffer(big.data() + sent, big.size() - sent), ec);
    if (!ec) {
      EXPECT_GT(n, 0u);
    } else {
      EXPECT_EQ(n, 0u);
    }
    sent += n;
  }
  ASSERT_EQ(ec, asio::error::would_block);
  ASSERT_LT(sent, big.size());
  std::vector<uint8_t> got(big.size());
  std::thread reader([&] { asio::read(peer, asio::buffer(got)); });
  run(ioc, [&]() -> asio::awaitable<void> {
    auto [wec, n] = co_await stream.write_all(asio::buffer(big.data() + sent, big.size() - sent));
    EXPECT_FALSE(wec);
    EXPECT_EQ(n, big.size() - sent);
  });
  reader.join();
  EXPECT_EQ(got, big);
}

TEST(Stream, WriteReadyToAClosedPeerIsAnError) {
  asio::io_context ioc;
  auto [mine, peer] = socket_pair(ioc);
  Stream stream(std::move(mine));
  peer.set_option(asio::socket_base::linger(true, 0));  // the close resets the connection
  peer.close();
  std::this_thread::sleep_for(milliseconds(20));
  boost::system::error_code ec;
  const std::string message = "after the reset";
  EXPECT_EQ(stream.write_ready(asio::buffer(message), ec), 0u);
  EXPECT_TRUE(ec);
  EXPECT_NE(ec, asio::error::would_block);
}

}  // namespace
}  // namespace docguard::proxy
