// The budget of series the whole /metrics exposition may hold (metrics.max_series).
#pragma once

#include <prometheus/metric_family.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace docguard::telemetry {

// The whole exposition's budget of series, counted as /metrics lines (a counter or gauge is one,
// a histogram its buckets + 3). The rules engine bounds each label dimension, but their product
// does not stay small: namespaces x field paths x apps reach hundreds of thousands of series at
// the defaults, about 3 KB of memory each. Past the budget a new label set is counted in its
// family's overflow series (every label "_other") instead.
class SeriesBudget {
 public:
  explicit SeriesBudget(size_t max_lines) : max_(max_lines) {}
  // Takes `lines` from the budget; false (and nothing taken) when they do not fit.
  bool take(size_t lines);
  // Returns lines a removed series held (a collection that is gone), so later label sets may
  // take them.
  void give_back(size_t lines) { used_.fetch_sub(lines, std::memory_order_relaxed); }
  size_t used() const { return used_.load(std::memory_order_relaxed); }
  size_t max() const { return max_; }
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

 private:
  const size_t max_;
  std::atomic<size_t> used_{0};
  std::atomic<uint64_t> refused_{0};
  std::atomic<bool> logged_{false};
};

// /metrics lines of collected families: one per counter or gauge, buckets + 3 per histogram.
size_t exposition_lines(const std::vector<prometheus::MetricFamily>& families);

}  // namespace docguard::telemetry
