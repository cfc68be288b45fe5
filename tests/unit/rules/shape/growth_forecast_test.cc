// The growth rate and forecast on synthetic series: steady, bursty, shrinking, reset by a
// replacement, and what a namespace's aggregate makes of a runaway document.
#include "docguard/rules/growth_forecast.h"

#include <gtest/gtest.h>

#include <vector>

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

// Feeds a series one observation per push: `per_push` elements every `interval` seconds.
GrowthSeries steady(uint32_t start, uint32_t per_push, double interval, int pushes) {
  GrowthSeries s;
  s.restart(0, start);
  for (int i = 1; i <= pushes; ++i) {
    s.observe(i * interval, start + per_push * static_cast<uint32_t>(i));
  }
  return s;
}

TEST(GrowthRateTest, SteadyGrowthGivesItsRate) {
  const GrowthSeries s = steady(0, 2, 0.5, 1000);  // 4 elements/s for 500 s
  ASSERT_LE(s.size(), GrowthSeries::kCapacity);
  const auto rate = s.rate(500);
  ASSERT_TRUE(rate);
  EXPECT_NEAR(*rate, 4.0, 0.01);
  // From a long stored array: the rate does not depend on where it started.
  const auto from_stored = steady(5000, 2, 0.5, 1000).rate(500);
  ASSERT_TRUE(from_stored);
  EXPECT_NEAR(*from_stored, 4.0, 0.01);
}

TEST(GrowthRateTest, RateFallsWhenPushesStop) {
  const GrowthSeries s = steady(0, 1, 1, 100);  // 1/s until t=100
  EXPECT_NEAR(*s.rate(100), 1.0, 0.02);
  // Nothing since: measured up to now, the rate falls, and then there is none.
  EXPECT_LT(*s.rate(150), 0.6);
  EXPECT_FALSE(s.rate(1000));
}

TEST(GrowthRateTest, BurstyGrowthAveragesOverTheWindow) {
  // 50 elements at once every 100 s (0.5/s on average), observed for 10,000 s.
  GrowthSeries s;
  s.restart(0, 0);
  uint32_t length = 0;
  for (int burst = 1; burst <= 100; ++burst) {
    for (int k = 0; k < 50; ++k) s.observe(burst * 100.0 + k * 0.01, ++length);
  }
  const auto rate = s.rate(10'050);
  ASSERT_TRUE(rate);
  EXPECT_NEAR(*rate, 0.5, 0.1);
}

TEST(GrowthRateTest, ShrinkingArraysHaveNoRate) {
  GrowthSeries s = steady(0, 1, 1, 50);
  ASSERT_TRUE(s.rate(50));
  s.observe(51, 10);  // something trims it
  EXPECT_TRUE(s.shrank());
  for (int i = 1; i <= 50; ++i) s.observe(51 + i, 10 + static_cast<uint32_t>(i));
  EXPECT_FALSE(s.rate(101)) << "a trimmed array grows again but stays bounded by its app";
}

TEST(GrowthRateTest, AReadThatRacedAPushIsNoShrink) {
  GrowthSeries s = steady(0, 1, 1, 50);  // 50 after the last push
  s.observe(50.5, 49);                   // read before the last push landed
  EXPECT_FALSE(s.shrank());
  EXPECT_NEAR(*s.rate(51), 1.0, 0.05);
  s.observe(52, 20);  // well below: trimmed
  EXPECT_TRUE(s.shrank());
}

TEST(GrowthRateTest, ReplacementStartsANewHistory) {
  GrowthSeries s = steady(0, 10, 1, 100);  // fast: 10/s
  ASSERT_NEAR(*s.rate(100), 10, 0.1);
  s.restart(100, 3);  // replaced: a new document as far as growth goes
  EXPECT_FALSE(s.rate(100)) << "one observation is no rate";
  for (int i = 1; i <= 20; ++i) s.observe(100 + i, 3 + static_cast<uint32_t>(i));
  EXPECT_NEAR(*s.rate(120), 1.0, 0.06);
  // A trimmed one restarted by a replacement is forecast again.
  s.observe(121, 0);
  EXPECT_FALSE(s.forecastable());
  s.restart(122, 0);
  EXPECT_TRUE(s.forecastable());
}

TEST(GrowthRateTest, SlicedArraysHaveNoRate) {
  GrowthSeries s = steady(0, 1, 1, 50);
  s.mark_bounded();
  EXPECT_FALSE(s.rate(50));
}

TEST(GrowthRateTest, TooFewSamplesOrTooShortAWindowAreNoRate) {
  GrowthSeries once;
  once.restart(0, 5);
  EXPECT_FALSE(once.rate(10));
  // An insert and a push 10 ms later: not hundreds per second.
  GrowthSeries quick;
  quick.restart(0, 0);
  quick.observe(0.01, 1);
  quick.observe(0.02, 2);
  EXPECT_FALSE(quick.rate(0.03));
  const std::vector<GrowthSample> flat{{0, 5}, {1, 5}, {2, 5}};
  EXPECT_FALSE(growth_rate(flat, 2));
  EXPECT_FALSE(growth_rate({}, 2));
}

TEST(ForecastTest, SecondsUntilABound) {
  EXPECT_EQ(seconds_until(50, 100, 5), 10.0);
  EXPECT_EQ(seconds_until(120, 100, 5), 0.0);
  EXPECT_FALSE(seconds_until(50, 0, 5));  // no bound
  EXPECT_FALSE(seconds_until(50, 100, 0));
}

TEST(ForecastTest, EachLimitFromElementsAndBytes) {
  DocumentGrowth g;
  g.length = 100;
  g.rate = 2;  // elements per second
  g.array_bound = 1000;
  g.document_bytes = 1'000'000;
  g.bytes_per_element = 500;  // 1,000 bytes per second
  g.document_bound = 2'000'000;
  const auto eta = forecast_limits(g);
  EXPECT_DOUBLE_EQ(*eta[0], 450);
  EXPECT_DOUBLE_EQ(*eta[1], 1000);
  EXPECT_DOUBLE_EQ(*eta[2], (kMaxBsonDocumentBytes - 1'000'000) / 1000);
  g.document_bytes = 0;  // size never measured: no size forecasts
  const auto no_size = forecast_limits(g);
  EXPECT_TRUE(no_size[0]);
  EXPECT_FALSE(no_size[1]);
  EXPECT_FALSE(no_size[2]);
}

TEST(ForecastTest, SummaryTakesTheSoonestDocumentAndARobustRate) {
  std::vector<DocumentGrowth> docs;
  for (int i = 0; i < 6; ++i) {
    DocumentGrowth& g = docs.emplace_back();
    g.db = "shop";
    g.coll = "carts";
    g.field = "items";
    g.id = {static_cast<uint8_t>(i)};
    g.length = 10;
    g.rate = 1 + i;  // 1..6 per second
    g.array_bound = 100;
  }
  docs[5].rate = 1000;  // one runaway
  DocumentGrowth& other = docs.emplace_back();
  other.db = "shop";
  other.coll = "logs";
  other.field = "lines";
  other.length = 0;
  other.rate = 0.001;
  other.array_bound = 100;
  const auto summary = summarize_forecasts(docs);
  ASSERT_EQ(summary.size(), 2u);  // per namespace and field; only array bounds known
  EXPECT_EQ(summary[0].coll, "carts");
  EXPECT_EQ(summary[0].id, std::vector<uint8_t>{5});
  EXPECT_DOUBLE_EQ(summary[0].eta_seconds, 90.0 / 1000);
  EXPECT_EQ(summary[0].growing_documents, 6u);
  EXPECT_DOUBLE_EQ(summary[0].namespace_rate, 4);  // median of the 5 fastest: 1000,5,4,3,2
  EXPECT_EQ(summary[1].coll, "logs");
  EXPECT_DOUBLE_EQ(summary[1].eta_seconds, 100'000);
  EXPECT_EQ(fastest_median({}), 0);
  EXPECT_EQ(fastest_median({3, 1}), 2);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
