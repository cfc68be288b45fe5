// The spin lock keeps its sections apart: counts added under it by several threads are all
// there, and try_lock fails while it is held.
#include "docguard/base/spin_lock.h"

#include <gtest/gtest.h>

#include <mutex>
#include <thread>
#include <vector>

namespace docguard::base {
namespace {

TEST(SpinLock, SectionsOfSeveralThreadsNeverOverlap) {
  SpinLock lock;
  // Two fields changed apart inside the section: a reader inside it always sees them equal.
  uint64_t first = 0;
  uint64_t second = 0;
  bool torn = false;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        std::lock_guard guard(lock);
        if (first != second) torn = true;
        ++first;
        ++second;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_FALSE(torn);
  EXPECT_EQ(first, 80000u);
  EXPECT_EQ(second, 80000u);
}

TEST(SpinLock, TryLockFailsWhileHeld) {
  SpinLock lock;
  ASSERT_TRUE(lock.try_lock());
  bool taken_elsewhere = true;
  std::thread([&] { taken_elsewhere = lock.try_lock(); }).join();
  EXPECT_FALSE(taken_elsewhere);
  lock.unlock();
  std::thread([&] {
    taken_elsewhere = lock.try_lock();
    if (taken_elsewhere) lock.unlock();
  }).join();
  EXPECT_TRUE(taken_elsewhere);
}

}  // namespace
}  // namespace docguard::base
