// The per-io_context sweep that checks session timeouts: it calls every item on its period,
// an item may leave while being checked, and without items it leaves no work behind (so an
// io_context with no sessions is idle).
#include "docguard/proxy/session_sweep.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <functional>

namespace docguard::proxy {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

struct Item : SweepItem {
  std::function<void(Item&)> on_check;
  int checks = 0;
  void check_timeouts(std::chrono::steady_clock::time_point) override {
    ++checks;
    if (on_check) on_check(*this);
  }
};

TEST(SessionSweep, PeriodIsAQuarterOfTheShortestTimeoutWithinBounds) {
  EXPECT_EQ(SessionSweep::period_for(milliseconds(1000)), milliseconds(250));
  EXPECT_EQ(SessionSweep::period_for(milliseconds(100)), milliseconds(50));
  EXPECT_EQ(SessionSweep::period_for(milliseconds(30000)), milliseconds(5000));
}

TEST(SessionSweep, ChecksEveryItemUntilItLeaves) {
  asio::io_context ioc(1);
  auto& sweep = SessionSweep::of(ioc.get_executor());
  Item stays, leaves;
  // `leaves` removes itself on its third check, the way a session closes from check_timeouts;
  // `stays` then removes itself too, which stops the timer and lets run() return.
  leaves.on_check = [&](Item& self) {
    if (self.checks == 3) sweep.remove(self);
  };
  stays.on_check = [&](Item& self) {
    if (self.checks == 6) sweep.remove(self);
  };
  asio::post(ioc, [&] {
    sweep.add(stays, ioc.get_executor(), milliseconds(10));
    sweep.add(leaves, ioc.get_executor(), milliseconds(10));
  });
  const auto started = std::chrono::steady_clock::now();
  ioc.run();  // returns once the sweep has no items: no timer is left pending
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  EXPECT_EQ(leaves.checks, 3);
  EXPECT_EQ(stays.checks, 6);
  EXPECT_TRUE(sweep.empty());
}

TEST(SessionSweep, TheLastItemLeavingStopsTheTimer) {
  asio::io_context ioc(1);
  auto& sweep = SessionSweep::of(ioc.get_executor());
  Item item;
  asio::post(ioc, [&] {
    sweep.add(item, ioc.get_executor(), milliseconds(5000));
    asio::post(ioc, [&] { sweep.remove(item); });
  });
  const auto started = std::chrono::steady_clock::now();
  ioc.run();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
  EXPECT_EQ(item.checks, 0);
}

TEST(SessionSweep, ItemsStillLinkedWhenTheContextGoesAreUnlinked) {
  Item item;
  {
    asio::io_context ioc(1);
    auto& sweep = SessionSweep::of(ioc.get_executor());
    sweep.add(item, ioc.get_executor(), milliseconds(50));
    EXPECT_TRUE(item.sweep_hook.is_linked());
  }
  EXPECT_FALSE(item.sweep_hook.is_linked());
}

}  // namespace
}  // namespace docguard::proxy
