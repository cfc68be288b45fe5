// Metrics as the rules engine's MeasurementSink: each labelled family's series found in the
// io thread's cells (thread_cells.h), label sets past the series budget (series_budget.h) counted
// under "_other".
#include <type_traits>

#include "docguard/proxy/metrics.h"

namespace docguard::proxy {

namespace {

using prometheus::Histogram;

const Histogram::BucketBoundaries kSizeBuckets = {
    256, 1024, 4096, 16384, 65536, 262144, 1048576, 2097152, 4194304, 8388608, 12582912, 16777216};
const Histogram::BucketBoundaries kArrayBuckets = {1,   5,    10,   25,   50,    100,  250,
                                                   500, 1000, 2500, 5000, 10000, 50000};

// The label-set families of the per-message series, for ThreadCells::find.
enum Family : uint8_t {
  kCommands,
  kAppCommands,
  kDocumentSize,
  kArrayLength,
  kArrayPush,
  kReads,
  kReadsWithLookup,
  kLookups,
  kViolations,
  kCandidateViolations,
  kSchemaUnjudged,
  kGuardrailUnknown,
  kUnindexedOperations,
  kFamilyCount
};
static_assert(kFamilyCount <= ThreadCells::kFamilies);

}  // namespace

template <typename Metric>
ThreadCells::Handle Metrics::cells_for(MetricIndex<Metric>& index,
                                       prometheus::Family<Metric>& family, uint8_t family_id,
                                       const rules::NamespaceLabels* ns, LabelNames names,
                                       ThreadCells::LabelValues values,
                                       const ThreadCells::Bounds* bounds) {
  // The namespace's id stands for its two labels in this thread's index and last series.
  return cells_.find(family_id, ns ? ns->id : 0, values, [&]() -> ThreadCells::Resolved {
    std::string key;
    if (ns) {
      for (auto v : {ns->db, ns->coll}) {
        key.append(v);
        key.push_back(ThreadCells::kSeparator);
      }
    }
    for (auto v : values) {
      key.append(v);
      key.push_back(ThreadCells::kSeparator);
    }
    const auto make = [&](bool overflow) -> Metric& {
      const auto value = [&](std::string_view v) {
        return overflow ? std::string(rules::kOverflowLabel) : std::string(v);
      };
      prometheus::Labels labels;
      if (ns) {
        labels.emplace("db", value(ns->db));
        labels.emplace("collection", value(ns->coll));
      }
      auto name = names.begin();
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

void Metrics::on_command(const rules::NamespaceLabels& ns, std::string_view command,
                         std::string_view app) {
  // Per namespace and per app in two families: their product (apps x namespaces x commands)
  // would be most of the exposition.
  cells_.increment(cells_for(commands_index_, commands_, kCommands, &ns, {"command"}, {command}));
  cells_.increment(cells_for(app_commands_index_, app_commands_, kAppCommands, nullptr,
                             {"app", "command"}, {app, command}));
}

void Metrics::on_document_size(const rules::NamespaceLabels& ns, std::string_view source,
                               double bytes) {
  cells_.observe(cells_for(document_size_index_, document_size_, kDocumentSize, &ns, {"source"},
                           {source}, &kSizeBuckets),
                 bytes);
}

void Metrics::on_array_length(const rules::NamespaceLabels& ns, std::string_view field,
                              double length) {
  cells_.observe(cells_for(array_length_index_, array_length_, kArrayLength, &ns, {"field"},
                           {field}, &kArrayBuckets),
                 length);
}

void Metrics::on_array_push(const rules::NamespaceLabels& ns, std::string_view field,
                            double elements) {
  cells_.increment(cells_for(array_push_index_, array_push_, kArrayPush, &ns, {"field"}, {field}),
                   elements);
}

void Metrics::on_read(const rules::NamespaceLabels& ns, bool with_lookup,
                      std::string_view /*app*/) {
  cells_.increment(cells_for(reads_index_, reads_, kReads, &ns, {}, {}));
  if (with_lookup) {
    cells_.increment(
        cells_for(reads_with_lookup_index_, reads_with_lookup_, kReadsWithLookup, &ns, {}, {}));
  }
}

void Metrics::on_lookup(const rules::NamespaceLabels& ns, std::string_view from) {
  cells_.increment(cells_for(lookups_index_, lookups_, kLookups, &ns, {"from"}, {from}));
}

void Metrics::on_violation(const rules::NamespaceLabels& ns, std::string_view rule,
                           rules::Action action, std::string_view app) {
  cells_.increment(cells_for(violations_index_, violations_, kViolations, &ns,
                             {"rule", "action", "app"}, {rule, rules::action_name(action), app}));
}

void Metrics::on_candidate_violation(const rules::NamespaceLabels& ns, std::string_view rule,
                                     rules::Action would, std::string_view app) {
  cells_.increment(cells_for(candidate_violations_index_, candidate_violations_,
                             kCandidateViolations, &ns, {"rule", "action", "app"},
                             {rule, rules::action_name(would), app}));
}

void Metrics::on_schema_unjudged(const rules::NamespaceLabels& ns) {
  cells_.increment(
      cells_for(schema_unjudged_index_, schema_unjudged_, kSchemaUnjudged, &ns, {}, {}));
}

void Metrics::on_guardrail_unknown(const rules::NamespaceLabels& ns) {
  cells_.increment(
      cells_for(guardrail_unknown_index_, guardrail_unknown_, kGuardrailUnknown, &ns, {}, {}));
}

void Metrics::on_unindexed_operation(const rules::NamespaceLabels& ns, std::string_view app) {
  cells_.increment(cells_for(unindexed_operations_index_, unindexed_operations_,
                             kUnindexedOperations, &ns, {"app"}, {app}));
}

}  // namespace docguard::proxy
