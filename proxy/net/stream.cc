#include "docguard/proxy/stream.h"

#include <sys/socket.h>

#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/recycling_allocator.hpp>
#include <cerrno>

namespace docguard::proxy {

namespace asio = boost::asio;

asio::awaitable<std::tuple<Stream::error_code, size_t>> Stream::read_plain(asio::mutable_buffer b) {
  if (b.size() >= kStreamingReadBytes) {
    // The rest of a large message: it is on its way, so Asio's receive-first path usually finds
    // bytes, and one thread's set would wake for each chunk of few sockets.
    co_return co_await plain_.async_read_some(b, kUseTuple);
  }
  // The same two steps the session takes: receive what is there, wait for an edge when the
  // last receive found the socket empty.
  while (true) {
    if (!watch_ || watch_->maybe_readable) {
      error_code ec;
      const size_t n = read_ready(b, ec);
      if (ec != asio::error::would_block) co_return std::tuple{ec, n};
    }
    auto [ec] = co_await wait_readable();
    if (ec) co_return std::tuple{ec, size_t{0}};
  }
}

asio::awaitable<std::tuple<Stream::error_code>> Stream::wait_readable() {
  if (!watch_) watch_ = std::make_unique<ReadWatch>(ReadinessPoller::of(plain_.get_executor()));
  return watch_->poller->async_wait(
      *watch_, plain_.native_handle(),
      asio::bind_allocator(asio::recycling_allocator<void>(), kUseTuple));
}

asio::awaitable<std::tuple<Stream::error_code>> Stream::wait_first_bytes() {
  uint8_t byte = 0;
  while (true) {
    const ssize_t n = ::recv(plain_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n >= 0) co_return std::tuple{error_code{}};  // bytes, or the end of the stream
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      co_return std::tuple{error_code(errno, boost::system::system_category())};
    }
    break;
  }
  if (!watch_) watch_ = std::make_unique<ReadWatch>(ReadinessPoller::of(plain_.get_executor()));
  watch_->maybe_readable = false;  // the receive above found nothing: wait for the edge
  co_return co_await wait_readable();
}

size_t Stream::read_ready(asio::mutable_buffer b, error_code& ec) {
  ec = {};
  while (true) {
    const ssize_t n = ::recv(plain_.native_handle(), b.data(), b.size(), MSG_DONTWAIT);
    if (n > 0) {
      // A short receive took everything the socket had: the next wait needs a new edge.
      if (watch_ && static_cast<size_t>(n) < b.size()) watch_->maybe_readable = false;
      return static_cast<size_t>(n);
    }
    if (n == 0) {
      ec = asio::error::eof;
      return 0;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (watch_) watch_->maybe_readable = false;
      ec = asio::error::would_block;
    } else {
      ec = error_code(errno, boost::system::system_category());
    }
    return 0;
  }
}

size_t Stream::write_ready(asio::const_buffer b, error_code& ec) {
  ec = {};
  if (tls_) return 0;
  while (true) {
    const ssize_t n =
        ::send(plain_.native_handle(), b.data(), b.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      ec = asio::error::would_block;
    } else {
      ec = error_code(errno, boost::system::system_category());
    }
    return 0;
  }
}

}  // namespace docguard::proxy
