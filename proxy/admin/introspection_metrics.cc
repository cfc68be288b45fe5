// docguard_introspection_* and the per-collection gauges of what docguard knows of the cluster:
// the introspection layer's sink, in Prometheus.
#include "docguard/proxy/introspection_metrics.h"

#include <set>

namespace docguard::proxy {

IntrospectionMetrics::IntrospectionMetrics(prometheus::Registry& registry)
    : runs_(prometheus::BuildCounter()
                .Name("docguard_introspection_runs_total")
                .Help("Introspection passes (docguard's own reads of the cluster), by result")
                .Register(registry)),
      seconds_(prometheus::BuildHistogram()
                   .Name("docguard_introspection_seconds")
                   .Help("Duration of introspection passes")
                   .Register(registry)
                   .Add({}, prometheus::Histogram::BucketBoundaries{1, 5, 15, 60, 300, 900, 3600})),
      commands_(prometheus::BuildCounter()
                    .Name("docguard_introspection_commands_total")
                    .Help("Commands docguard sent to read the cluster")
                    .Register(registry)
                    .Add({})),
      unknown_facts_(prometheus::BuildGauge()
                         .Name("docguard_introspection_unknown_facts")
                         .Help("Facts the last pass could not read (rights, server support)")
                         .Register(registry)
                         .Add({})),
      documents_(prometheus::BuildGauge()
                     .Name("docguard_collection_documents")
                     .Help("Documents in the collection, from the server's statistics")
                     .Register(registry)),
      size_bytes_(prometheus::BuildGauge()
                      .Name("docguard_collection_size_bytes")
                      .Help("Uncompressed data size of the collection, from the server")
                      .Register(registry)) {}

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
    auto [it, inserted] = collection_series_.try_emplace(ns);
    if (inserted) {
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
    it = collection_series_.erase(it);
  }
}

}  // namespace docguard::proxy
