#include "docguard/proxy/readiness_poller.h"

#include <sys/epoll.h>

#include <array>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/system_error.hpp>
#include <cerrno>
#include <utility>
#include <vector>

namespace docguard::proxy {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

int new_epoll_set() {
  const int fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (fd < 0) throw boost::system::system_error(errno, boost::system::system_category(), "epoll");
  return fd;
}

}  // namespace

ReadinessPoller::ReadinessPoller(asio::io_context& context)
    : asio::execution_context::service(context),
      epoll_fd_(new_epoll_set()),
      events_(context, epoll_fd_) {}

ReadinessPoller::~ReadinessPoller() = default;  // events_ closes the epoll set

ReadinessPoller& ReadinessPoller::of(const asio::any_io_executor& executor) {
  // Sessions run on io_contexts (one per thread), so the context is one.
  auto& context = static_cast<asio::io_context&>(asio::query(executor, asio::execution::context));
  return asio::use_service<ReadinessPoller>(context);
}

void ReadinessPoller::start(ReadWatch& watch, int fd, Handler handler) {
  if (watch.fd != fd) {
    // Edge-triggered: adding a socket that already has data reports it at once, so bytes that
    // arrived after the caller's last receive are not missed.
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
    ev.data.ptr = &watch;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      resume(std::move(handler), error_code(errno, boost::system::system_category()));
      return;
    }
    watch.fd = fd;
  }
  auto slot = asio::get_associated_cancellation_slot(handler);
  if (slot.is_connected()) {
    slot.assign([this, &watch](asio::cancellation_type) {
      complete(watch, asio::error::operation_aborted);
    });
  }
  // swap, not move assignment: Boost 1.81's any_completion_handler::operator=(&&) wraps the
  // handler in itself without end.
  watch.waiter.swap(handler);
  link(watch);
  if (watch.maybe_readable) {
    complete(watch, {});  // reported while the caller was busy
    return;
  }
  arm();
}

ReadinessPoller::Handler ReadinessPoller::take(ReadWatch& watch) {
  Handler handler(std::move(watch.waiter));  // leaves watch.waiter empty
  unlink(watch);
  asio::get_associated_cancellation_slot(handler).clear();
  return handler;
}

void ReadinessPoller::complete(ReadWatch& watch, error_code ec) {
  if (!watch.waiter) return;
  resume(take(watch), ec);
  // The last waiter gave up (closed, cancelled): no wait left to keep the context busy.
  if (ec && waiting_ == 0 && armed_) events_.cancel();
}

void ReadinessPoller::resume(Handler handler, error_code ec) {
  // Posted, never run inline: the caller may be harvesting events that point at other watches,
  // and the handler may close sessions. Every waiter runs on this context's one thread, so the
  // context's executor is the waiter's.
  asio::post(events_.get_executor(),
             [handler = std::move(handler), ec]() mutable { std::move(handler)(ec); });
}

void ReadinessPoller::arm() {
  if (armed_ || waiting_ == 0) return;
  armed_ = true;
  events_.async_wait(asio::posix::stream_descriptor::wait_read, [this](const error_code& ec) {
    armed_ = false;
    if (ec) {
      // Cancelled when nobody waited; someone may have started waiting since.
      if (ec == asio::error::operation_aborted) arm();
      return;
    }
    harvest();
  });
}

void ReadinessPoller::harvest() {
  std::array<epoll_event, 128> events;
  const int n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), 0);
  // Every ready waiter is taken before any runs: a session that runs may close sockets whose
  // events are in this batch. They run here, in this handler, rather than each posted: this is
  // their executor's thread, and they resume in the order the kernel reported them.
  std::vector<Handler> ready;
  ready.swap(ready_);
  for (int i = 0; i < n; ++i) {
    auto& watch = *static_cast<ReadWatch*>(events[static_cast<size_t>(i)].data.ptr);
    watch.maybe_readable = true;
    if (watch.waiter) ready.push_back(take(watch));
  }
  for (Handler& handler : ready) std::move(handler)(error_code{});
  ready.clear();
  ready_.swap(ready);  // keeps the capacity for the next wake-up
  // More may be ready than one call returns: the re-arm reports the set again if so.
  arm();
}

void ReadinessPoller::cancel(ReadWatch& watch) { complete(watch, asio::error::operation_aborted); }

void ReadinessPoller::forget(ReadWatch& watch) {
  cancel(watch);
  if (watch.fd >= 0) {
    // A closed descriptor leaves the set by itself; removing it first means no event can name
    // this watch after it is gone, whatever else holds the socket.
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, watch.fd, nullptr);
    watch.fd = -1;
  }
}

void ReadinessPoller::link(ReadWatch& watch) {
  watch.prev = nullptr;
  watch.next = waiters_;
  if (waiters_ != nullptr) waiters_->prev = &watch;
  waiters_ = &watch;
  ++waiting_;
}

void ReadinessPoller::unlink(ReadWatch& watch) {
  if (watch.prev != nullptr) watch.prev->next = watch.next;
  if (watch.next != nullptr) watch.next->prev = watch.prev;
  if (waiters_ == &watch) waiters_ = watch.next;
  watch.prev = watch.next = nullptr;
  --waiting_;
}

void ReadinessPoller::shutdown() {
  // The context is going away: pending waits are destroyed, not run (as Asio does with its own
  // operations). Taken out first, since destroying one may destroy its session and its watch.
  std::vector<Handler> pending;
  while (waiters_ != nullptr) {
    ReadWatch& watch = *waiters_;
    unlink(watch);
    asio::get_associated_cancellation_slot(watch.waiter).clear();
    pending.push_back(std::move(watch.waiter));  // leaves watch.waiter empty
  }
  pending.clear();
}

}  // namespace docguard::proxy
