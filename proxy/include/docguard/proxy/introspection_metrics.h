// The introspection layer's sink in Prometheus: docguard_introspection_* and the per-collection
// gauges the advisor's facts give. One small file so it moves with the rest of the metrics code.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "docguard/advisor/live_advisor.h"
#include "docguard/introspection/introspection_sink.h"
#include "docguard/telemetry/series_budget.h"

namespace docguard::proxy {

class IntrospectionMetrics final : public introspection::IntrospectionSink {
 public:
  // The per-collection gauges take their lines from `budget` (metrics.max_series), as every
  // per-namespace series does: a cluster of many thousand collections does not outgrow it.
  IntrospectionMetrics(prometheus::Registry& registry, telemetry::SeriesBudget& budget);
  // docguard_introspection_runs_total{result}.
  void count_run(introspection::PassResult result) override;
  void observe_seconds(double seconds) override { seconds_.Observe(seconds); }
  void add_commands(uint64_t n) override { commands_.Increment(static_cast<double>(n)); }
  void set_unknown_facts(size_t n) override { unknown_facts_.Set(static_cast<double>(n)); }
  // docguard_collection_documents / docguard_collection_size_bytes{db,collection}: the server's
  // statistics of each collection docguard knows; series of collections gone are removed and
  // their lines given back to the budget. A collection the budget has no room for is left out.
  void update_collections(const std::vector<advisor::LiveAdvisor::CollectionFacts>& facts);

 private:
  prometheus::Family<prometheus::Counter>& runs_;
  prometheus::Histogram& seconds_;
  prometheus::Counter& commands_;
  prometheus::Gauge& unknown_facts_;
  prometheus::Family<prometheus::Gauge>& documents_;
  prometheus::Family<prometheus::Gauge>& size_bytes_;
  telemetry::SeriesBudget& budget_;
  std::mutex mutex_;
  std::map<std::string, prometheus::Counter*> run_series_;
  std::map<std::string, std::pair<prometheus::Gauge*, prometheus::Gauge*>> collection_series_;
};

}  // namespace docguard::proxy
