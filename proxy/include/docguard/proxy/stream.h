// A TCP connection that may be wrapped in TLS: the session reads and writes through this and
// does not care which.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <memory>
#include <string>

namespace docguard::proxy {

class Stream {
 public:
  using tcp = boost::asio::ip::tcp;
  using error_code = boost::system::error_code;

  explicit Stream(tcp::socket socket) : plain_(std::move(socket)) {}

  // Wraps the connected socket in TLS and runs the handshake. For a client handshake,
  // `server_name` is sent as SNI and checked against the certificate (unless empty).
  boost::asio::awaitable<error_code> start_tls(boost::asio::ssl::context& context,
                                               boost::asio::ssl::stream_base::handshake_type type,
                                               const std::string& server_name,
                                               bool verify_name = true);

  tcp::socket& socket() { return tls_ ? tls_->next_layer() : plain_; }
  bool is_tls() const { return tls_ != nullptr; }
  boost::asio::any_io_executor get_executor() { return plain_.get_executor(); }

  // Not coroutines themselves: they hand back the operation's awaitable, so a read or write
  // costs no extra coroutine frame.
  boost::asio::awaitable<std::tuple<error_code, size_t>> read_some(boost::asio::mutable_buffer b) {
    return tls_ ? tls_->async_read_some(b, kUseTuple) : plain_.async_read_some(b, kUseTuple);
  }
  // Plain TCP: waits until the socket has bytes (or end of stream) without lending it a buffer,
  // then reads what is there without waiting (would_block when nothing). A connection waiting
  // for its next message then holds no receive buffer. TLS reads go through read_some, since
  // the TLS layer may hold decrypted bytes the socket no longer shows.
  boost::asio::awaitable<std::tuple<error_code>> wait_readable() {
    return plain_.async_wait(tcp::socket::wait_read, kUseTuple);
  }
  size_t read_ready(boost::asio::mutable_buffer b, error_code& ec) {
    if (!plain_.non_blocking()) plain_.non_blocking(true, ec);
    return ec ? 0 : plain_.read_some(b, ec);
  }
  boost::asio::awaitable<std::tuple<error_code, size_t>> write_all(boost::asio::const_buffer b) {
    return tls_ ? boost::asio::async_write(*tls_, b, WholeBuffer{}, kUseTuple)
                : boost::asio::async_write(plain_, b, WholeBuffer{}, kUseTuple);
  }
  void close() {
    error_code ec;
    socket().shutdown(tcp::socket::shutdown_both, ec);
    socket().close(ec);
  }

 private:
  // Offers the kernel everything left in one send: asio's default (transfer_all) caps each
  // send at 64 KiB, so a 1 MiB message took 16 sends, each delivered on its own.
  struct WholeBuffer {
    size_t operator()(const error_code& ec, size_t) const { return ec ? 0 : size_t{1} << 30; }
  };
  static constexpr auto kUseTuple = boost::asio::as_tuple(boost::asio::use_awaitable);
  // When TLS is on, the socket lives inside tls_ and plain_ is a moved-from shell kept only
  // for its executor.
  tcp::socket plain_;
  std::unique_ptr<boost::asio::ssl::stream<tcp::socket>> tls_;
};

}  // namespace docguard::proxy
