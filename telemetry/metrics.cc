#include "docguard/telemetry/metrics.h"

#include <prometheus/text_serializer.h>

#include <array>
#include <cstring>
#include <map>
#include <sstream>

#include "docguard/base/key_parts.h"
#include "docguard/codec/error_kinds.h"

namespace docguard::telemetry {
namespace {

using prometheus::Histogram;

// The families' bucket bounds, from the table, kept for the series added later.
const Histogram::BucketBoundaries kSizeBuckets = family::kDocumentSize.bucket_bounds();
const Histogram::BucketBoundaries kArrayBuckets = family::kArrayLength.bucket_bounds();
const Histogram::BucketBoundaries kSelectionBuckets = family::kSelectionWaitSeconds.bucket_bounds();
const Histogram::BucketBoundaries kInspectionBuckets = family::kInspectionSeconds.bucket_bounds();

std::string s(std::string_view v) { return std::string(v); }

}  // namespace

prometheus::Counter& LabeledCounter::get(const std::string& value) {
  std::lock_guard lock(mutex_);
  if (auto it = cache_.find(value); it != cache_.end()) return *it->second;
  const std::string& label =
      cache_.size() < max_values_ ? value : std::string(rules::kOverflowLabel);
  auto& counter = family_.Add({{label_, label}});
  cache_.emplace(value, &counter);
  return counter;
}

Metrics::Metrics(MetricsSettings settings)
    : registry_(std::make_shared<prometheus::Registry>()),
      message_bytes_(counters(family::kMessageBytes)),
      connections_total(counters(family::kConnectionsTotal).Add({})),
      connections_active(gauges(family::kConnectionsActive).Add({})),
      connections_rejected(counters(family::kConnectionsRejected).Add({})),
      messages_blocked(counters(family::kAnsweredByProxy).Add({})),
      protocol_errors(counters(family::kProtocolErrors), "kind"),
      upstream_errors(counters(family::kUpstreamErrors), "kind"),
      compressed_messages(counters(family::kCompressedMessages), "compressor"),
      config_reloads(counters(family::kConfigReloads), "result"),
      recording_packets(counters(family::kRecordingPackets).Add({})),
      recording_dropped(counters(family::kRecordingDropped).Add({})),
      recording_failures(counters(family::kRecordingFailures), "reason"),
      upstream_up(gauges(family::kUpstreamUp).Add({})),
      primary_changes(counters(family::kPrimaryChanges).Add({})),
      selection_waits(counters(family::kSelectionWaits).Add({})),
      selection_failures(counters(family::kSelectionFailures).Add({})),
      selection_wait_seconds(histograms(family::kSelectionWaitSeconds).Add({}, kSelectionBuckets)),
      budget_(settings.max_series),
      commands_(counters(family::kCommands)),
      app_commands_(counters(family::kAppCommands)),
      document_size_(histograms(family::kDocumentSize)),
      array_length_(histograms(family::kArrayLength)),
      array_push_(counters(family::kArrayPush)),
      reads_(counters(family::kReads)),
      reads_with_lookup_(counters(family::kReadsWithLookup)),
      lookups_(counters(family::kLookups)),
      violations_(counters(family::kViolations)),
      candidate_violations_(counters(family::kCandidateViolations)),
      schema_unjudged_(counters(family::kSchemaUnjudged)),
      schema_bypassed_(counters(family::kSchemaBypassed)),
      guardrail_unknown_(counters(family::kGuardrailUnknown)),
      unindexed_operations_(counters(family::kUnindexedOperations)),
      array_length_max_(gauges(family::kArrayLengthMax)),
      array_length_bound_(gauges(family::kArrayLengthBound)),
      topology_type_(gauges(family::kTopologyType)),
      upstream_connections_(gauges(family::kUpstreamConnections)),
      findings_(gauges(family::kFindings)),
      series_budget_used_(gauges(family::kMetricSeries).Add({})),
      series_over_budget_(counters(family::kMetricSeriesOverBudget).Add({})) {
  client_bytes_ = cells_.add(message_bytes_.Add({{"direction", "client_to_upstream"}}));
  upstream_bytes_ = cells_.add(message_bytes_.Add({{"direction", "upstream_to_client"}}));
  inspection_seconds_ = cells_.add(
      histograms(family::kInspectionSeconds).Add({}, kInspectionBuckets), kInspectionBuckets);
  set_topology_type(cluster::TopologyType::kUnknown);
  gauges(family::kBuildInfo).Add({{"version", DOCGUARD_VERSION}}).Set(1);
  // Pre-create the fixed label values so dashboards and alerts see zeros, not absences.
  for (const auto& error : codec::kUpstreamErrors) upstream_errors.get(codec::metric_label(error));
  for (const auto kind : codec::kProtocolErrorKinds) protocol_errors.get(codec::name(kind));
  for (const char* c : {"snappy", "zlib", "zstd"}) compressed_messages.get(c);
  for (const char* r : {"success", "failure"}) config_reloads.get(r);
  for (const char* r : {"queue_full", "write_error"}) recording_failures.get(r);
  // The fixed series count against the budget too: what is left is for the labelled ones.
  budget_.take(exposition_lines(registry_->Collect()));
}

std::string Metrics::serialize() const {
  cells_.fold();
  series_budget_used_.Set(static_cast<double>(budget_.used()));
  const auto refused = static_cast<double>(budget_.refused());
  if (refused > series_over_budget_.Value()) {
    series_over_budget_.Increment(refused - series_over_budget_.Value());
  }
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry_->Collect());
  return out.str();
}

void Metrics::set_topology_type(cluster::TopologyType type) {
  std::lock_guard lock(topology_type_mutex_);
  for (const auto& [value, name] : cluster::kTopologyTypeNames.entries()) {
    topology_type_.Add({{"type", name}}).Set(value == type ? 1 : 0);
  }
}

prometheus::Gauge& Metrics::upstream_connections(std::string_view server) {
  return upstream_connections_index_.get(server, [&]() -> prometheus::Gauge& {
    return upstream_connections_.Add({{"server", s(server)}});
  });
}

namespace {}  // namespace

template <typename Metric>
ThreadCells::Handle Metrics::cells_for(MetricIndex<Metric>& index,
                                       prometheus::Family<Metric>& family,
                                       const MetricFamily& table_entry,
                                       const rules::NamespaceLabels* ns,
                                       ThreadCells::LabelValues values,
                                       const ThreadCells::Bounds* bounds) {
  // The namespace's id stands for its two labels in this thread's index and last series.
  return cells_.find(
      static_cast<uint8_t>(table_entry.cells_slot), ns ? ns->id : 0, values,
      [&]() -> ThreadCells::Resolved {
        std::string key;
        if (ns) {
          base::append_key_part(key, ns->db);
          base::append_key_part(key, ns->coll);
        }
        for (auto v : values) base::append_key_part(key, v);
        const auto make = [&](bool overflow) -> Metric& {
          const auto value = [&](std::string_view v) {
            return overflow ? std::string(rules::kOverflowLabel) : std::string(v);
          };
          // The table's label names: "db", "collection" first for a family by namespace.
          const std::vector<std::string> names = table_entry.label_names();
          prometheus::Labels labels;
          auto name = names.begin();
          if (ns) {
            labels.emplace(*name++, value(ns->db));
            labels.emplace(*name++, value(ns->coll));
          }
          for (auto v : values) labels.emplace(*name++, value(v));
          if constexpr (std::is_same_v<Metric, prometheus::Histogram>) {
            return family.Add(labels, *bounds);
          } else {
            return family.Add(labels);
          }
        };
        const auto handle = [&](Metric& series) {
          if constexpr (std::is_same_v<Metric, prometheus::Histogram>) {
            return cells_.add(series, *bounds);
          } else {
            return cells_.add(series);
          }
        };
        if (Metric* known = index.find(key)) return {handle(*known), true};
        const size_t lines = bounds != nullptr ? bounds->size() + 3 : 1;
        if (budget_.take(lines))
          return {handle(index.get(key, [&]() -> Metric& { return make(false); })), true};
        return {handle(index.overflow([&]() -> Metric& { return make(true); })), false};
      });
}

template <typename Metric>
[[gnu::always_inline]] inline void Metrics::add(MetricIndex<Metric>& index,
                                                prometheus::Family<Metric>& family,
                                                const MetricFamily& table_entry,
                                                const rules::NamespaceLabels* ns,
                                                ThreadCells::LabelValues values, double v,
                                                const ThreadCells::Bounds* bounds) {
  if (cells_.add_to_last(static_cast<uint8_t>(table_entry.cells_slot), ns ? ns->id : 0, values, v,
                         bounds != nullptr)) {
    return;
  }
  add_to_series(index, family, table_entry, ns, values, v, bounds);
}

template <typename Metric>
void Metrics::add_to_series(MetricIndex<Metric>& index, prometheus::Family<Metric>& family,
                            const MetricFamily& table_entry, const rules::NamespaceLabels* ns,
                            ThreadCells::LabelValues values, double v,
                            const ThreadCells::Bounds* bounds) {
  const ThreadCells::Handle handle = cells_for(index, family, table_entry, ns, values, bounds);
  if (bounds != nullptr) {
    cells_.observe(handle, v);
  } else {
    cells_.increment(handle, v);
  }
}

void Metrics::on_command(const rules::NamespaceLabels& ns, std::string_view command,
                         std::string_view app) {
  // Per namespace and per app in two families: their product (apps x namespaces x commands)
  // would be most of the exposition. Every message comes here: the two are found as a pair.
  if (cells_.increment_known_pair(ns.id, command, app)) return;
  add(commands_index_, commands_, family::kCommands, &ns, {command});
  add(app_commands_index_, app_commands_, family::kAppCommands, nullptr, {app, command});
  cells_.remember_pair(static_cast<uint8_t>(family::kCommands.cells_slot),
                       static_cast<uint8_t>(family::kAppCommands.cells_slot), ns.id, command, app);
}

void Metrics::on_document_size(const rules::NamespaceLabels& ns, std::string_view source,
                               double bytes) {
  add(document_size_index_, document_size_, family::kDocumentSize, &ns, {source}, bytes,
      &kSizeBuckets);
}

void Metrics::on_array_length(const rules::NamespaceLabels& ns, std::string_view field,
                              double length) {
  add(array_length_index_, array_length_, family::kArrayLength, &ns, {field}, length,
      &kArrayBuckets);
}

void Metrics::on_array_push(const rules::NamespaceLabels& ns, std::string_view field,
                            double elements) {
  add(array_push_index_, array_push_, family::kArrayPush, &ns, {field}, elements);
}

void Metrics::on_read(const rules::NamespaceLabels& ns, bool with_lookup,
                      std::string_view /*app*/) {
  // A read without a join (most) makes one update here; a read with one, two, out of line.
  if (with_lookup) {
    on_read_with_lookup(ns);
    return;
  }
  add(reads_index_, reads_, family::kReads, &ns, {});
}

void Metrics::on_read_with_lookup(const rules::NamespaceLabels& ns) {
  add(reads_index_, reads_, family::kReads, &ns, {});
  add(reads_with_lookup_index_, reads_with_lookup_, family::kReadsWithLookup, &ns, {});
}

void Metrics::on_lookup(const rules::NamespaceLabels& ns, std::string_view from) {
  add(lookups_index_, lookups_, family::kLookups, &ns, {from});
}

void Metrics::on_violation(const rules::NamespaceLabels& ns, std::string_view rule,
                           rules::Action action, std::string_view app) {
  add(violations_index_, violations_, family::kViolations, &ns,
      {rule, rules::action_name(action), app});
}

void Metrics::on_candidate_violation(const rules::NamespaceLabels& ns, std::string_view rule,
                                     rules::Action would, std::string_view app) {
  add(candidate_violations_index_, candidate_violations_, family::kCandidateViolations, &ns,
      {rule, rules::action_name(would), app});
}

void Metrics::on_schema_unjudged(const rules::NamespaceLabels& ns) {
  add(schema_unjudged_index_, schema_unjudged_, family::kSchemaUnjudged, &ns, {});
}

void Metrics::on_schema_bypassed(const rules::NamespaceLabels& ns, std::string_view app) {
  add(schema_bypassed_index_, schema_bypassed_, family::kSchemaBypassed, &ns, {app});
}

void Metrics::on_guardrail_unknown(const rules::NamespaceLabels& ns) {
  add(guardrail_unknown_index_, guardrail_unknown_, family::kGuardrailUnknown, &ns, {});
}

void Metrics::on_unindexed_operation(const rules::NamespaceLabels& ns, std::string_view app) {
  add(unindexed_operations_index_, unindexed_operations_, family::kUnindexedOperations, &ns, {app});
}

}  // namespace docguard::telemetry
