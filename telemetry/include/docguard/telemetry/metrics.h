// Prometheus metrics: every metric docguard exports is declared here, once.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "docguard/advisor/finding.h"
#include "docguard/base/hash.h"
#include "docguard/cluster/topology.h"
#include "docguard/rules/engine.h"
#include "docguard/telemetry/metric_families.h"
#include "docguard/telemetry/series_budget.h"
#include "docguard/telemetry/thread_cells.h"

namespace docguard::telemetry {

// Counters keyed by a small, fixed vocabulary (error kinds, compressors). Unknown keys past
// the cap collapse into "_other" so a hostile client cannot grow the label set.
class LabeledCounter {
 public:
  LabeledCounter(prometheus::Family<prometheus::Counter>& family, std::string label,
                 size_t max_values = 64)
      : family_(family), label_(std::move(label)), max_values_(max_values) {}
  prometheus::Counter& get(const std::string& value);

 private:
  prometheus::Family<prometheus::Counter>& family_;
  std::string label_;
  size_t max_values_;
  std::mutex mutex_;
  std::unordered_map<std::string, prometheus::Counter*> cache_;
};

// Metrics resolved once per label set: prometheus-cpp's Family::Add builds a label map and hashes
// it (and, for histograms, builds a new histogram) on every call, which is too much per message.
// Only label sets the series budget admitted are kept, so the index is bounded by it.
template <typename Metric>
class MetricIndex {
 public:
  Metric* find(std::string_view key) {
    std::shared_lock lock(mutex_);
    auto it = map_.find(key);
    return it == map_.end() ? nullptr : it->second;
  }
  template <typename Make>
  Metric& get(std::string_view key, const Make& make) {
    if (Metric* found = find(key)) return *found;
    std::unique_lock lock(mutex_);
    auto [it, inserted] = map_.try_emplace(std::string(key), nullptr);
    if (inserted) it->second = &make();
    return *it->second;
  }
  // The family's one overflow series, made on first use.
  template <typename Make>
  Metric& overflow(const Make& make) {
    std::unique_lock lock(mutex_);
    if (overflow_ == nullptr) overflow_ = &make();
    return *overflow_;
  }

 private:
  using StringHash = base::StringHash;
  std::shared_mutex mutex_;
  std::unordered_map<std::string, Metric*, StringHash, std::equal_to<>> map_;
  Metric* overflow_ = nullptr;
};

struct MetricsSettings {
  // The budget of /metrics lines (metrics.max_series). At the default the whole exposition,
  // fixed series included, stays under 10,000 lines.
  size_t max_series = 8'500;
};

class Metrics final : public rules::MeasurementSink {
  // First member: every metric below is registered in it during construction.
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& message_bytes_;

 public:
  explicit Metrics(MetricsSettings settings = {});

  std::string serialize() const;  // Prometheus text exposition format (folds the cells first)
  // For metrics owned elsewhere (introspection's), registered beside these.
  prometheus::Registry& registry() { return *registry_; }
  // The budget every series of the exposition takes its lines from, for the families other
  // layers register in registry() (introspection's per-collection gauges).
  SeriesBudget& series_budget() { return budget_; }
  // Refreshes the gauges computed at scrape time from the engine's state.
  void update_array_gauges(const rules::Engine& engine);
  // docguard_findings{db,collection,kind,severity}: the advisor's findings, counted.
  void update_findings(const std::vector<advisor::Finding>& findings);

  prometheus::Counter& connections_total;
  prometheus::Gauge& connections_active;
  prometheus::Counter& connections_rejected;
  // Per message, so counted in this thread's cells (see ThreadCells).
  // docguard_message_bytes_total{direction="client_to_upstream"}
  void add_client_bytes(size_t n) { cells_.increment(client_bytes_, static_cast<double>(n)); }
  // docguard_message_bytes_total{direction="upstream_to_client"}
  void add_upstream_bytes(size_t n) { cells_.increment(upstream_bytes_, static_cast<double>(n)); }
  // docguard_inspection_seconds
  void observe_inspection(double seconds) { cells_.observe(inspection_seconds_, seconds); }
  prometheus::Counter& messages_blocked;
  LabeledCounter protocol_errors;      // {kind}
  LabeledCounter upstream_errors;      // {kind}
  LabeledCounter compressed_messages;  // {compressor}
  LabeledCounter config_reloads;       // {result}
  // The traffic recorder: counted by its writer thread, and once when a recording fails.
  prometheus::Counter& recording_packets;
  prometheus::Counter& recording_dropped;
  LabeledCounter recording_failures;  // {reason}
  prometheus::Gauge& upstream_up;     // 1 when the upstream accepted the last connection attempt

  // The upstream cluster.
  prometheus::Counter& primary_changes;           // docguard_cluster_primary_changes_total
  prometheus::Counter& selection_waits;           // docguard_server_selection_waits_total
  prometheus::Counter& selection_failures;        // docguard_server_selection_failures_total
  prometheus::Histogram& selection_wait_seconds;  // docguard_server_selection_wait_seconds
  // docguard_cluster_topology_type{type}: 1 for the current SDAM type, 0 for the others.
  void set_topology_type(cluster::TopologyType type);
  // docguard_upstream_connections{server}: upstream connections open per server (bounded by
  // the cluster's size).
  prometheus::Gauge& upstream_connections(std::string_view server);

  // rules::MeasurementSink: labels arrive already bounded by the rules engine.
  void on_command(const rules::NamespaceLabels& ns, std::string_view command,
                  std::string_view app) override;
  void on_document_size(const rules::NamespaceLabels& ns, std::string_view source,
                        double bytes) override;
  void on_array_length(const rules::NamespaceLabels& ns, std::string_view field,
                       double length) override;
  void on_array_push(const rules::NamespaceLabels& ns, std::string_view field,
                     double elements) override;
  void on_read(const rules::NamespaceLabels& ns, bool with_lookup, std::string_view app) override;
  void on_lookup(const rules::NamespaceLabels& ns, std::string_view from) override;
  void on_violation(const rules::NamespaceLabels& ns, std::string_view rule, rules::Action action,
                    std::string_view app) override;
  // docguard_candidate_violations_total{db,collection,rule,action,app}: action is what the
  // candidate rule would have done.
  void on_candidate_violation(const rules::NamespaceLabels& ns, std::string_view rule,
                              rules::Action would, std::string_view app) override;
  // docguard_schema_unjudged_total{db,collection}
  void on_schema_unjudged(const rules::NamespaceLabels& ns) override;
  // docguard_schema_bypassed_total{db,collection,app}
  void on_schema_bypassed(const rules::NamespaceLabels& ns, std::string_view app) override;
  // docguard_guardrail_unknown_total{db,collection}: operations the query guardrail did not
  // judge because the namespace's indexes were not known yet.
  void on_guardrail_unknown(const rules::NamespaceLabels& ns) override;
  // docguard_unindexed_operations_total{db,collection,app}: operations of a shape no known
  // index serves (the workload ledger's judgement).
  void on_unindexed_operation(const rules::NamespaceLabels& ns, std::string_view app) override;

 private:
  // The families this registers, from the one table (metric_families.h).
  prometheus::Family<prometheus::Counter>& counters(const MetricFamily& f) {
    return register_family<prometheus::Counter>(*registry_, f);
  }
  prometheus::Family<prometheus::Gauge>& gauges(const MetricFamily& f) {
    return register_family<prometheus::Gauge>(*registry_, f);
  }
  prometheus::Family<prometheus::Histogram>& histograms(const MetricFamily& f) {
    return register_family<prometheus::Histogram>(*registry_, f);
  }

  // The cells of a labeled series (the namespace's labels when the family has them, then
  // `values` in the order of the table's labels), found in this thread's index (no lock); the
  // shared index resolves the series on this thread's first use of the label set. `bounds`: a
  // histogram's. Label sets past the series budget go to the family's overflow series.
  template <typename Metric>
  ThreadCells::Handle cells_for(MetricIndex<Metric>& index, prometheus::Family<Metric>& family,
                                const MetricFamily& table_entry, const rules::NamespaceLabels* ns,
                                ThreadCells::LabelValues values,
                                const ThreadCells::Bounds* bounds = nullptr);

  // on_read of a read with a $lookup: both of its counters.
  [[gnu::noinline]] void on_read_with_lookup(const rules::NamespaceLabels& ns);
  // Adds `v` to a labeled counter, or observes it in a labeled histogram (`bounds` set): the
  // family's last series on this thread inline, cells_for() and the update out of line.
  template <typename Metric>
  void add(MetricIndex<Metric>& index, prometheus::Family<Metric>& family,
           const MetricFamily& table_entry, const rules::NamespaceLabels* ns,
           ThreadCells::LabelValues values, double v = 1,
           const ThreadCells::Bounds* bounds = nullptr);
  template <typename Metric>
  [[gnu::noinline]] void add_to_series(MetricIndex<Metric>& index,
                                       prometheus::Family<Metric>& family,
                                       const MetricFamily& table_entry,
                                       const rules::NamespaceLabels* ns,
                                       ThreadCells::LabelValues values, double v,
                                       const ThreadCells::Bounds* bounds);

  // Declared before every handle into it.
  mutable ThreadCells cells_;
  ThreadCells::Handle client_bytes_, upstream_bytes_, inspection_seconds_;

  SeriesBudget budget_;
  prometheus::Family<prometheus::Counter>& commands_;
  prometheus::Family<prometheus::Counter>& app_commands_;
  prometheus::Family<prometheus::Histogram>& document_size_;
  prometheus::Family<prometheus::Histogram>& array_length_;
  prometheus::Family<prometheus::Counter>& array_push_;
  prometheus::Family<prometheus::Counter>& reads_;
  prometheus::Family<prometheus::Counter>& reads_with_lookup_;
  prometheus::Family<prometheus::Counter>& lookups_;
  prometheus::Family<prometheus::Counter>& violations_;
  prometheus::Family<prometheus::Counter>& candidate_violations_;
  prometheus::Family<prometheus::Counter>& schema_unjudged_;
  prometheus::Family<prometheus::Counter>& schema_bypassed_;
  prometheus::Family<prometheus::Counter>& guardrail_unknown_;
  prometheus::Family<prometheus::Counter>& unindexed_operations_;
  prometheus::Family<prometheus::Gauge>& array_length_max_;
  prometheus::Family<prometheus::Gauge>& array_length_bound_;
  prometheus::Family<prometheus::Gauge>& topology_type_;
  prometheus::Family<prometheus::Gauge>& upstream_connections_;
  MetricIndex<prometheus::Gauge> upstream_connections_index_;
  std::mutex topology_type_mutex_;
  prometheus::Family<prometheus::Gauge>& findings_;
  std::mutex findings_mutex_;
  std::map<prometheus::Labels, prometheus::Gauge*> findings_series_;
  // The array gauges' series the budget admitted, by their labels (refreshed at scrape time).
  std::mutex array_gauges_mutex_;
  std::map<prometheus::Labels, std::pair<prometheus::Gauge*, prometheus::Gauge*>> array_gauges_;
  prometheus::Gauge& series_budget_used_;
  prometheus::Counter& series_over_budget_;

  MetricIndex<prometheus::Counter> commands_index_, app_commands_index_, array_push_index_,
      reads_index_, reads_with_lookup_index_, lookups_index_, violations_index_,
      candidate_violations_index_, schema_unjudged_index_, schema_bypassed_index_,
      guardrail_unknown_index_, unindexed_operations_index_;
  MetricIndex<prometheus::Histogram> document_size_index_, array_length_index_;
};

}  // namespace docguard::telemetry
