// The one histogram: its buckets tile the range, its one quantile formula (nearest rank), the
// lean variant answers as the full one does, and counts past 2^32 do not wrap.
#include "docguard/base/log_histogram.h"

#include <gtest/gtest.h>

namespace docguard::base {
namespace {

template <class H>
void expect_buckets_tile_the_range() {
  EXPECT_EQ(H::bucket_low(0), 0u);
  for (int b = 0; b + 1 < H::kBuckets; ++b) {
    ASSERT_EQ(H::bucket_high(b) + 1, H::bucket_low(b + 1)) << b;
    ASSERT_EQ(H::bucket_of(H::bucket_low(b)), b);
    ASSERT_EQ(H::bucket_of(H::bucket_high(b)), b);
  }
  EXPECT_EQ(H::bucket_of(UINT64_MAX), H::kBuckets - 1);
}

TEST(LogHistogram, BucketsTileTheRange) {
  expect_buckets_tile_the_range<LogHistogram<3, 64>>();
  expect_buckets_tile_the_range<LogHistogram<2, 41>>();
  expect_buckets_tile_the_range<LogHistogram<2, 36, false>>();
  EXPECT_EQ((LogHistogram<3, 64>::kBuckets), 496);
  EXPECT_EQ((LogHistogram<2, 41>::kBuckets), 160);
}

TEST(LogHistogram, NearestRankQuantileNeverAboveTheLargestValue) {
  LogHistogram<2, 41> h;
  EXPECT_EQ(h.quantile(0.99), 0u);
  for (uint64_t v = 1; v <= 100; ++v) h.add(v);
  EXPECT_EQ(h.count(), 100u);
  EXPECT_EQ(h.max(), 100u);
  EXPECT_EQ(h.sum(), 5050u);
  // The 50th and the 99th value, as the upper end of their buckets: 48..55 and 96..111.
  EXPECT_EQ(h.quantile(0.5), 55u);
  EXPECT_EQ(h.quantile(0.99), 100u);  // 111, but never above the largest value
  EXPECT_EQ(h.quantile(0.0), 1u);     // the first value at least
  LogHistogram<2, 41> small;
  for (uint64_t v : {1, 2, 3, 4, 5, 6, 7}) small.add(v);  // exact below 8
  EXPECT_EQ(small.quantile(0.5), 4u);                     // ceil(3.5) = the 4th
}

TEST(LogHistogram, TheLeanVariantAnswersAsTheFullOne) {
  LogHistogram<2, 36> full;
  LogHistogram<2, 36, false> lean;
  for (uint64_t v = 0; v < 5000; v += 7) {
    full.add(v * v);
    lean.add(v * v);
  }
  EXPECT_EQ(lean.count(), full.count());
  // The same bucket; the full one knows the largest value exactly, the lean one its bucket.
  using H = LogHistogram<2, 36>;
  for (double q : {0.01, 0.5, 0.9, 0.99}) {
    EXPECT_EQ(H::bucket_of(lean.quantile(q)), H::bucket_of(full.quantile(q))) << q;
  }
  EXPECT_EQ(lean.max(), H::bucket_high(H::bucket_of(full.max())));
}

TEST(LogHistogram, CountsPastTwoToTheThirtyTwoDoNotWrap) {
  LogHistogram<2, 41> h;
  h.add(5);
  for (int i = 0; i < 34; ++i) h.merge(LogHistogram<2, 41>(h));  // doubles each time
  EXPECT_EQ(h.count(), uint64_t{1} << 34);
  EXPECT_EQ(h.bucket_count(5), uint64_t{1} << 34);
  EXPECT_EQ(h.quantile(0.99), 5u);
  h.add(UINT64_MAX);
  EXPECT_EQ(h.sum(), UINT64_MAX);  // saturates
}

}  // namespace
}  // namespace docguard::base
