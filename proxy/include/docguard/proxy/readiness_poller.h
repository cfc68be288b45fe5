// Waits for plain TCP sockets to become readable without a wasted receive.
//
// Asio's epoll reactor tries a speculative receive before it waits for a socket, and in a
// request/response relay that receive nearly always fails with EAGAIN: after a request is
// forwarded the reply is not there yet, after a reply the next request is not. Asking Asio to
// wait instead (async_wait) re-arms the socket with an epoll_ctl each time, which is no saving.
// So each io thread keeps one more epoll set of its own, which Asio watches as one descriptor:
// a socket is added once (edge-triggered), a session receives until a receive comes back short
// (the socket is then empty: new data raises a new edge), and one wake-up of the set serves every
// socket that became readable. Per message that is one receive instead of two; per wake-up of
// the set, an epoll_wait and an epoll_ctl, shared by all sockets ready in it.
#pragma once

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cstddef>
#include <vector>

namespace docguard::proxy {

class ReadinessPoller;

// One socket's place in its thread's poller; owned by the Stream, at a fixed address (the
// epoll set points to it).
struct ReadWatch {
  explicit ReadWatch(ReadinessPoller& p) : poller(&p) {}
  ReadWatch(const ReadWatch&) = delete;
  ReadWatch& operator=(const ReadWatch&) = delete;

  ReadinessPoller* poller;
  int fd = -1;  // as registered in the epoll set; -1 when not registered
  // False once a receive came back short or empty, until the epoll set reports the socket.
  bool maybe_readable = true;
  boost::asio::any_completion_handler<void(boost::system::error_code)> waiter;
  ReadWatch* prev = nullptr;  // the poller's list of watches with a waiter (for shutdown)
  ReadWatch* next = nullptr;
};

class ReadinessPoller : public boost::asio::execution_context::service {
 public:
  using key_type = ReadinessPoller;
  static inline boost::asio::execution_context::id id;

  explicit ReadinessPoller(boost::asio::io_context& context);
  ~ReadinessPoller() override;

  // The poller of the io_context behind `executor` (created on first use).
  static ReadinessPoller& of(const boost::asio::any_io_executor& executor);

  // Completes when the epoll set reports `fd` readable (or closed, or in error); at once if it
  // did since the last receive came back short. Registers `fd` on first use. Supports
  // per-operation cancellation (operation_aborted).
  template <typename Token>
  auto async_wait(ReadWatch& watch, int fd, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code)>(
        [this, &watch, fd](auto handler) { start(watch, fd, std::move(handler)); }, token);
  }

  // Completes a pending wait with operation_aborted (the socket is being closed).
  void cancel(ReadWatch& watch);
  // Cancels and removes the socket from the epoll set; call before its descriptor is closed.
  void forget(ReadWatch& watch);

 private:
  using Handler = boost::asio::any_completion_handler<void(boost::system::error_code)>;
  void shutdown() override;
  void start(ReadWatch& watch, int fd, Handler handler);
  Handler take(ReadWatch& watch);  // the watch's waiter, no longer waiting
  void complete(ReadWatch& watch, boost::system::error_code ec);
  void resume(Handler handler, boost::system::error_code ec);
  void arm();
  void harvest();
  void link(ReadWatch& watch);
  void unlink(ReadWatch& watch);

  int epoll_fd_;
  boost::asio::posix::stream_descriptor events_;  // epoll_fd_ as Asio's reactor sees it
  bool armed_ = false;
  size_t waiting_ = 0;
  ReadWatch* waiters_ = nullptr;
  std::vector<Handler> ready_;  // harvest()'s scratch list, kept for its capacity
};

}  // namespace docguard::proxy
