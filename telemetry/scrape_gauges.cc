// The gauges set at scrape time from the advisor's findings and the engine's array statistics;
// their new label sets take lines from the series budget like every other series.
#include <map>

#include "docguard/telemetry/metrics.h"

namespace docguard::telemetry {

void Metrics::update_findings(const std::vector<advisor::Finding>& findings) {
  // Label sets are bounded by the advisor (namespaces x kinds x severities); past kMaxFindingSeries
  // the rest are not exported.
  constexpr size_t kMaxFindingSeries = 1000;
  std::map<prometheus::Labels, double> counts;
  for (const auto& f : findings) {
    prometheus::Labels labels{{"db", f.db},
                              {"collection", f.collection},
                              {"kind", advisor::kind_name(f.kind)},
                              {"severity", advisor::severity_name(f.severity)}};
    if (counts.size() < kMaxFindingSeries || counts.count(labels)) counts[labels] += 1;
  }
  std::lock_guard lock(findings_mutex_);
  for (auto& [labels, gauge] : findings_series_) gauge->Set(0);  // resolved findings drop to 0
  for (const auto& [labels, count] : counts) {
    auto it = findings_series_.find(labels);
    if (it == findings_series_.end()) {
      if (!budget_.take(1)) continue;
      it = findings_series_.emplace(labels, &findings_.Add(labels)).first;
    }
    it->second->Set(count);
  }
}

void Metrics::update_array_gauges(const rules::Engine& engine) {
  std::lock_guard lock(array_gauges_mutex_);
  for (const auto& a : engine.array_fields()) {
    prometheus::Labels labels{{"db", a.db}, {"collection", a.coll}, {"field", a.field}};
    auto it = array_gauges_.find(labels);
    if (it == array_gauges_.end()) {
      // Both gauges' lines are taken at once, so a bound that appears later has its line.
      if (!budget_.take(2)) continue;
      it = array_gauges_.emplace(labels, std::make_pair(&array_length_max_.Add(labels), nullptr))
               .first;
    }
    it->second.first->Set(a.max_length);
    if (a.bound > 0) {
      if (it->second.second == nullptr) it->second.second = &array_length_bound_.Add(labels);
      it->second.second->Set(a.bound);
    }
  }
}

}  // namespace docguard::telemetry
