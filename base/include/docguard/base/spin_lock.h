// A lock for the short sections the message path enters on every command (a namespace's
// statistics, a shard of tracked documents, a thread's workload table): one atomic exchange to
// take it and one store to give it back, where an uncontended std::mutex calls into libpthread
// both ways (about 55 instructions a pair, counted). A waiter spins on a plain load and yields
// between tries, so a holder the scheduler took off its core gets it back. Nothing done under
// it may block or wait on anything else; the longest sections (a status page's pass over one
// namespace or one shard) are bounded by the tracking limits.
#pragma once

#include <atomic>
#include <thread>

namespace docguard::base {

class SpinLock {
 public:
  void lock() noexcept {
    while (held_.exchange(true, std::memory_order_acquire)) {
      while (held_.load(std::memory_order_relaxed)) std::this_thread::yield();
    }
  }
  bool try_lock() noexcept {
    return !held_.load(std::memory_order_relaxed) &&
           !held_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

}  // namespace docguard::base
