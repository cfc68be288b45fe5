// One timer per io_context checks the timeouts of all its sessions (frame_timeout,
// idle_timeout, upstream_timeout), instead of a timer and a coroutine per session: an idle
// connection then costs neither.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/intrusive/list.hpp>
#include <chrono>
#include <optional>

namespace docguard::proxy {

// Links a session into its io_context's sweep. Unlinks itself when destroyed, but a session
// leaves explicitly (SessionSweep::remove) on its own thread when it ends.
using SweepHook =
    boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::auto_unlink>>;

// Something the sweep checks: check_timeouts may remove the item from the sweep.
class SweepItem {
 public:
  virtual void check_timeouts(std::chrono::steady_clock::time_point now) = 0;
  SweepHook sweep_hook;

 protected:
  ~SweepItem() = default;
};

// An io_context service. The io_context runs on one thread, so the list needs no lock: add()
// and remove() are called on that thread only.
class SessionSweep : public boost::asio::execution_context::service {
 public:
  using key_type = SessionSweep;
  static inline boost::asio::execution_context::id id;

  explicit SessionSweep(boost::asio::execution_context& context)
      : boost::asio::execution_context::service(context) {}

  // The sweep of the io_context `executor` runs on.
  static SessionSweep& of(const boost::asio::any_io_executor& executor);

  // Starts checking `item` every `period` (every item of one process shares the period).
  void add(SweepItem& item, const boost::asio::any_io_executor& executor,
           std::chrono::milliseconds period);
  // Without items the timer stops, so an io_context with no sessions has no pending work.
  void remove(SweepItem& item);
  bool empty() const { return items_.empty(); }

  // How often to check for timeouts that may be as short as `shortest`: a timeout fires
  // between its length and its length plus this.
  static std::chrono::milliseconds period_for(std::chrono::milliseconds shortest);

 private:
  void shutdown() override;
  void arm();
  void sweep();

  using List = boost::intrusive::list<
      SweepItem, boost::intrusive::member_hook<SweepItem, SweepHook, &SweepItem::sweep_hook>,
      boost::intrusive::constant_time_size<false>>;
  List items_;
  std::optional<boost::asio::steady_timer> timer_;
  std::chrono::milliseconds period_{1000};
  bool armed_ = false;
};

}  // namespace docguard::proxy
