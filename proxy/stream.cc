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
  if (!watch_) watch_ = std::make_unique<ReadWatch>(ReadinessPoller::of(plain_.get_executor()));
  while (true) {
    // The descriptor is read each time: after close() it is -1, never a number the process has
    // since given to another connection.
    const int fd = plain_.native_handle();
    if (watch_->maybe_readable) {
      const ssize_t n = ::recv(fd, b.data(), b.size(), MSG_DONTWAIT);
      if (n > 0) {
        // A short receive took everything the socket had: the next one waits for an edge.
        watch_->maybe_readable = static_cast<size_t>(n) == b.size();
        co_return std::tuple{error_code{}, static_cast<size_t>(n)};
      }
      if (n == 0) co_return std::tuple{error_code(asio::error::eof), size_t{0}};
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        co_return std::tuple{error_code(errno, boost::system::system_category()), size_t{0}};
      }
      watch_->maybe_readable = false;
    }
    // The waiter is type-erased while it waits: Asio's per-thread recycling allocator holds it
    // instead of malloc.
    auto [ec] = co_await watch_->poller->async_wait(
        *watch_, fd, asio::bind_allocator(asio::recycling_allocator<void>(), kUseTuple));
    if (ec) co_return std::tuple{ec, size_t{0}};
  }
}

asio::awaitable<std::tuple<Stream::error_code>> Stream::wait_readable() {
#ifdef DOCGUARD_IO_URING
  return plain_.async_wait(tcp::socket::wait_read, kUseTuple);  // one ring entry
#else
  if (!watch_) watch_ = std::make_unique<ReadWatch>(ReadinessPoller::of(plain_.get_executor()));
  return watch_->poller->async_wait(
      *watch_, plain_.native_handle(),
      asio::bind_allocator(asio::recycling_allocator<void>(), kUseTuple));
#endif
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

}  // namespace docguard::proxy
