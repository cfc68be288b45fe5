// docguard_introspection_* and the per-collection gauges of what docguard knows of the cluster:
// the introspection layer's sink, in Prometheus.
#include "docguard/proxy/introspection_metrics.h"

#include <set>

#include "docguard/telemetry/metric_families.h"

namespace docguard::proxy {

// A collection's two gauges (documents, size_bytes): the lines it takes from the budget.
constexpr size_t kLinesPerCollection = 2;

IntrospectionMetrics::IntrospectionMetrics(prometheus::Registry& registry,
                                           telemetry::SeriesBudget& budget)
    : runs_(telemetry::register_family<prometheus::Counter>(registry,
                                                            telemetry::family::kIntrospectionRuns)),
      seconds_(telemetry::register_family<prometheus::Histogram>(
                   registry, telemetry::family::kIntrospectionSeconds)
                   .Add({}, telemetry::family::kIntrospectionSeconds.bucket_bounds())),
      commands_(telemetry::register_family<prometheus::Counter>(
                    registry, telemetry::family::kIntrospectionCommands)
                    .Add({})),
      unknown_facts_(telemetry::register_family<prometheus::Gauge>(
                         registry, telemetry::family::kIntrospectionUnknownFacts)
                         .Add({})),
      documents_(telemetry::register_family<prometheus::Gauge>(
          registry, telemetry::family::kCollectionDocuments)),
      size_bytes_(telemetry::register_family<prometheus::Gauge>(
          registry, telemetry::family::kCollectionSizeBytes)),
      budget_(budget) {}

void IntrospectionMetrics::count_run(introspection::PassResult result) {
  const std::string label = introspection::kPassResultNames.name(result);
  std::lock_guard lock(mutex_);
  auto [it, inserted] = run_series_.try_emplace(label, nullptr);
  if (inserted) it->second = &runs_.Add({{"result", label}});
  it->second->Increment();
}

void IntrospectionMetrics::update_collections(
    const std::vector<advisor::LiveAdvisor::CollectionFacts>& facts) {
  std::lock_guard lock(mutex_);
  std::set<std::string> present;
  for (const auto& f : facts) {
    if (!f.metadata.stats.known) continue;
    const std::string ns = f.metadata.db + "." + f.metadata.collection;
    present.insert(ns);
    auto it = collection_series_.find(ns);
    if (it == collection_series_.end()) {
      if (!budget_.take(kLinesPerCollection)) continue;
      it = collection_series_.try_emplace(ns).first;
      const prometheus::Labels labels{{"db", f.metadata.db}, {"collection", f.metadata.collection}};
      it->second = {&documents_.Add(labels), &size_bytes_.Add(labels)};
    }
    it->second.first->Set(static_cast<double>(f.metadata.stats.documents));
    it->second.second->Set(static_cast<double>(f.metadata.stats.size_bytes));
  }
  for (auto it = collection_series_.begin(); it != collection_series_.end();) {
    if (present.count(it->first)) {
      ++it;
      continue;
    }
    documents_.Remove(it->second.first);
    size_bytes_.Remove(it->second.second);
    budget_.give_back(kLinesPerCollection);
    it = collection_series_.erase(it);
  }
}

}  // namespace docguard::proxy
