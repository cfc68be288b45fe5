#include "docguard/proxy/session_sweep.h"

#include <algorithm>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/query.hpp>

namespace docguard::proxy {

namespace asio = boost::asio;

SessionSweep& SessionSweep::of(const asio::any_io_executor& executor) {
  return asio::use_service<SessionSweep>(asio::query(executor, asio::execution::context));
}

std::chrono::milliseconds SessionSweep::period_for(std::chrono::milliseconds shortest) {
  using std::chrono::milliseconds;
  return std::clamp(shortest / 4, milliseconds(50), milliseconds(5000));
}

void SessionSweep::add(SweepItem& item, const asio::any_io_executor& executor,
                       std::chrono::milliseconds period) {
  if (item.sweep_hook.is_linked()) return;
  items_.push_back(item);
  period_ = period;
  if (!timer_) timer_.emplace(executor);
  if (!armed_) arm();
}

void SessionSweep::remove(SweepItem& item) {
  item.sweep_hook.unlink();
  if (items_.empty() && armed_) {
    timer_->cancel();
    armed_ = false;
  }
}

void SessionSweep::arm() {
  armed_ = true;
  timer_->expires_after(period_);
  timer_->async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;  // stopped by remove() or arm(), or the io_context is shutting down
    armed_ = false;
    sweep();
  });
}

void SessionSweep::sweep() {
  const auto now = std::chrono::steady_clock::now();
  for (auto it = items_.begin(); it != items_.end();) {
    SweepItem& item = *it++;  // check_timeouts may unlink the item: step past it first
    item.check_timeouts(now);
  }
  // Without sessions the thread sleeps until the next one arrives.
  if (!items_.empty()) arm();
}

void SessionSweep::shutdown() {
  // Sessions destroyed with the io_context must not reach back into this list.
  items_.clear();
  timer_.reset();
  armed_ = false;
}

}  // namespace docguard::proxy
