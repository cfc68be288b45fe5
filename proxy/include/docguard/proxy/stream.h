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

#include "docguard/proxy/readiness_poller.h"

namespace docguard::proxy {

class Stream {
 public:
  using tcp = boost::asio::ip::tcp;
  using error_code = boost::system::error_code;

  explicit Stream(tcp::socket socket) : plain_(std::move(socket)) {}
  Stream(Stream&&) = default;
  // Leaving the poller's set (forget_watch) throws only when the cancelled wait's completion
  // cannot be posted, out of memory: a move or a destructor has no one to tell, and ending the
  // process beats a wait never resumed.
  Stream& operator=(Stream&& other) noexcept {  // NOLINT(bugprone-exception-escape)
    forget_watch();  // before the socket it names is closed by the assignment
    plain_ = std::move(other.plain_);
    tls_ = std::move(other.tls_);
    watch_ = std::move(other.watch_);
    return *this;
  }
  ~Stream() { forget_watch(); }  // NOLINT(bugprone-exception-escape): as above

  // Wraps the connected socket in TLS and runs the handshake. For a client handshake,
  // `server_name` is sent as SNI and checked against the certificate (unless empty).
  boost::asio::awaitable<error_code> start_tls(boost::asio::ssl::context& context,
                                               boost::asio::ssl::stream_base::handshake_type type,
                                               const std::string& server_name,
                                               bool verify_name = true);

  tcp::socket& socket() { return tls_ ? tls_->next_layer() : plain_; }
  bool is_tls() const { return tls_ != nullptr; }
  // After a server handshake that required and verified the peer's certificate (tls.ca_file):
  // its subject as x509_user_name writes it; otherwise "" (a certificate nobody verified proves
  // nothing).
  std::string verified_peer_subject();
  boost::asio::any_io_executor get_executor() { return plain_.get_executor(); }

  // Not coroutines themselves: they hand back the operation's awaitable, so a read or write
  // costs no extra coroutine frame.
  boost::asio::awaitable<std::tuple<error_code, size_t>> read_some(boost::asio::mutable_buffer b) {
    return tls_ ? tls_->async_read_some(b, kUseTuple) : read_plain(b);
  }
  // Plain TCP: waits until the socket has bytes (or end of stream) without lending it a buffer,
  // then reads what is there without waiting (would_block when nothing). A connection waiting
  // for its next message then holds no receive buffer. With epoll the wait goes through the
  // thread's edge-triggered set (readiness_poller.h), so neither a failed speculative receive
  // nor an epoll_ctl re-arm is paid per wait. TLS reads go through read_some, since the TLS
  // layer may hold decrypted bytes the socket no longer shows.
  boost::asio::awaitable<std::tuple<error_code>> wait_readable();
  // Plain TCP: waits until the client has sent something (or closed), taking nothing. Unlike
  // wait_readable, which first assumes a socket may hold bytes, it waits for them.
  boost::asio::awaitable<std::tuple<error_code>> wait_first_bytes();
  size_t read_ready(boost::asio::mutable_buffer b, error_code& ec);
  // Plain TCP: sends what the socket takes now without waiting and returns how much
  // that was (0 with ec = would_block when its buffer is full). A small message nearly always
  // goes whole, so the session pays one send() instead of Asio's write operation around it
  // (about 1,300 instructions a message); write_all sends the rest, if any. TLS streams send
  // nothing here (0, no error): a TLS record is the TLS layer's to write.
  size_t write_ready(boost::asio::const_buffer b, error_code& ec);
  boost::asio::awaitable<std::tuple<error_code, size_t>> write_all(boost::asio::const_buffer b) {
    return tls_ ? boost::asio::async_write(*tls_, b, WholeBuffer{}, kUseTuple)
                : boost::asio::async_write(plain_, b, WholeBuffer{}, kUseTuple);
  }
  void close() {
    forget_watch();
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

  // Receives without TLS: waits for readiness first when the last receive found the socket
  // empty, then takes what the socket has (see readiness_poller.h). A buffer of at least
  // kStreamingReadBytes (the rest of a large message) goes through Asio's receive instead.
  static constexpr size_t kStreamingReadBytes = size_t{64} * 1024;
  boost::asio::awaitable<std::tuple<error_code, size_t>> read_plain(boost::asio::mutable_buffer b);
  void forget_watch() {
    if (watch_) watch_->poller->forget(*watch_);
  }

  // When TLS is on, the socket lives inside tls_ and plain_ is a moved-from shell kept only
  // for its executor.
  tcp::socket plain_;
  std::unique_ptr<boost::asio::ssl::stream<tcp::socket>> tls_;
  std::unique_ptr<ReadWatch> watch_;  // made on the first plain receive
};

}  // namespace docguard::proxy
