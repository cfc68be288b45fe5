#include "docguard/telemetry/series_budget.h"

#include <spdlog/spdlog.h>

namespace docguard::telemetry {

bool SeriesBudget::take(size_t lines) {
  size_t used = used_.load(std::memory_order_relaxed);
  do {
    if (used + lines > max_) {
      refused_.fetch_add(1, std::memory_order_relaxed);
      if (!logged_.exchange(true)) {
        spdlog::warn(
            "metrics: the series budget (metrics.max_series {}) is reached; new label sets are "
            "counted under \"_other\" from now on",
            max_);
      }
      return false;
    }
  } while (!used_.compare_exchange_weak(used, used + lines, std::memory_order_relaxed));
  return true;
}

size_t exposition_lines(const std::vector<prometheus::MetricFamily>& families) {
  size_t lines = 0;
  for (const auto& family : families) {
    for (const auto& metric : family.metric) {
      lines +=
          family.type == prometheus::MetricType::Histogram ? metric.histogram.bucket.size() + 2 : 1;
    }
  }
  return lines;
}

}  // namespace docguard::telemetry
