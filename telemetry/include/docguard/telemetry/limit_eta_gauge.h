// docguard_limit_eta_seconds{db,collection,field,limit}: seconds until the soonest tracked
// document's growing array reaches each bound (the rule's array length, the rule's document
// size, 16 MB), set at scrape time from the engine's forecasts. Bounded like every labelled
// family: the nearest `per_namespace` series of each namespace, at most kMaxSeries in all
// (namespaces are bounded by tracking.max_namespaces and field paths by max_field_paths
// already); series whose forecast went away are removed, not left at a stale value.
#pragma once

#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "docguard/rules/growth_forecast.h"

namespace docguard::telemetry {

class LimitEtaGauge {
 public:
  static constexpr size_t kMaxSeries = 1000;

  explicit LimitEtaGauge(prometheus::Registry& registry);
  // `forecasts` soonest first (as Engine::limit_forecasts gives them).
  void update(const std::vector<rules::PathForecast>& forecasts, size_t per_namespace);
  size_t series() const;

 private:
  prometheus::Family<prometheus::Gauge>& family_;
  mutable std::mutex mutex_;
  std::map<prometheus::Labels, prometheus::Gauge*> series_;
};

}  // namespace docguard::telemetry
