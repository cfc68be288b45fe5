// The $lookup window's counts: exact from several threads at once (no lock), sliding by slot,
// and cleared by a new window length.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "docguard/rules/collection_stats.h"

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

using namespace std::chrono_literals;
using Clock = LookupWindow::Clock;

// A time far from the clock's start, so that slot periods have many bits.
const Clock::time_point kStart = Clock::time_point{} + std::chrono::hours(24 * 400);

TEST(LookupWindowTest, CountsEveryReadFromManyThreadsAtOnce) {
  LookupWindow window;
  window.set_window(60s);
  constexpr int kThreads = 4;
  constexpr int kReads = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kReads; ++i) {
        // Across three slots, so that threads also start slots' new periods at once.
        window.add(kStart + std::chrono::milliseconds(i % 3 * 1000), (i + t) % 4 == 0);
      }
    });
  }
  for (auto& t : threads) t.join();
  const auto totals = window.totals(kStart + 2s);
  EXPECT_EQ(totals.reads, uint64_t{kThreads} * kReads);
  EXPECT_EQ(totals.lookups, uint64_t{kThreads} * kReads / 4);
}

TEST(LookupWindowTest, ReadsLeaveTheWindowSlotBySlot) {
  LookupWindow window;
  window.set_window(60s);  // 60 slots of a second
  window.add(kStart, true);
  window.add(kStart + 30s, false);
  window.add(kStart + 30s, false);
  EXPECT_EQ(window.totals(kStart + 59s).reads, 3u);
  EXPECT_EQ(window.totals(kStart + 59s).lookups, 1u);
  // The first slot has left; the read of 30s later has not.
  EXPECT_EQ(window.totals(kStart + 60s).reads, 2u);
  EXPECT_EQ(window.totals(kStart + 60s).lookups, 0u);
  EXPECT_EQ(window.totals(kStart + 90s).reads, 0u);
  // A slot used again a window later counts from zero.
  window.add(kStart + 60s, false);
  EXPECT_EQ(window.totals(kStart + 60s).reads, 3u);
  EXPECT_EQ(window.totals(kStart + 60s).lookups, 0u);
}

TEST(LookupWindowTest, ANewWindowLengthStartsEmpty) {
  LookupWindow window;
  window.set_window(60s);
  window.add(kStart, true);
  window.set_window(60s);  // the same length keeps the counts
  EXPECT_EQ(window.totals(kStart).reads, 1u);
  window.set_window(600s);
  EXPECT_EQ(window.window(), 600s);
  EXPECT_EQ(window.totals(kStart).reads, 0u);
  window.add(kStart, false);
  EXPECT_EQ(window.totals(kStart + 599s).reads, 1u);
  EXPECT_EQ(window.totals(kStart + 610s).reads, 0u);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
