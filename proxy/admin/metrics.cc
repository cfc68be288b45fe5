#include "docguard/proxy/metrics.h"

#include <prometheus/text_serializer.h>

#include <array>
#include <cstring>
#include <map>
#include <sstream>

#include "docguard/codec/error_kinds.h"

namespace docguard::proxy {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;
using prometheus::Histogram;

const Histogram::BucketBoundaries kSelectionBuckets = {0.01, 0.05, 0.1, 0.25, 0.5, 1,
                                                       2.5,  5,    10,  30,   60};
const Histogram::BucketBoundaries kInspectionBuckets = {1e-6, 2e-6,   5e-6, 1e-5, 2.5e-5, 5e-5,
                                                        1e-4, 2.5e-4, 1e-3, 1e-2, 1e-1};

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
      message_bytes_(BuildCounter()
                         .Name("docguard_message_bytes_total")
                         .Help("Wire-protocol bytes relayed, by direction")
                         .Register(*registry_)),
      connections_total(BuildCounter()
                            .Name("docguard_connections_total")
                            .Help("Client connections accepted")
                            .Register(*registry_)
                            .Add({})),
      connections_active(BuildGauge()
                             .Name("docguard_connections_active")
                             .Help("Client connections open now")
                             .Register(*registry_)
                             .Add({})),
      connections_rejected(
          BuildCounter()
              .Name("docguard_connections_rejected_total")
              .Help("Client connections refused because max_connections was reached")
              .Register(*registry_)
              .Add({})),
      messages_blocked(
          BuildCounter()
              .Name("docguard_requests_answered_by_proxy_total")
              .Help("Requests docguard answered itself (blocked writes, upstream down)")
              .Register(*registry_)
              .Add({})),
      protocol_errors(
          BuildCounter()
              .Name("docguard_protocol_errors_total")
              .Help("Malformed or refused messages, by kind; each closes its connection")
              .Register(*registry_),
          "kind"),
      upstream_errors(BuildCounter()
                          .Name("docguard_upstream_errors_total")
                          .Help("Upstream connection failures, by kind")
                          .Register(*registry_),
                      "kind"),
      compressed_messages(BuildCounter()
                              .Name("docguard_compressed_messages_total")
                              .Help("OP_COMPRESSED messages received from clients, by compressor")
                              .Register(*registry_),
                          "compressor"),
      config_reloads(BuildCounter()
                         .Name("docguard_config_reloads_total")
                         .Help("Configuration reloads (SIGHUP), by result")
                         .Register(*registry_),
                     "result"),
      upstream_up(BuildGauge()
                      .Name("docguard_upstream_up")
                      .Help("1 if the upstream accepted the last connection attempt (sessions, "
                            "/readyz, scrapes)")
                      .Register(*registry_)
                      .Add({})),
      primary_changes(BuildCounter()
                          .Name("docguard_cluster_primary_changes_total")
                          .Help("Changes of the upstream's writable servers (failovers) seen by "
                                "docguard's topology monitor")
                          .Register(*registry_)
                          .Add({})),
      selection_waits(BuildCounter()
                          .Name("docguard_server_selection_waits_total")
                          .Help("Client connections that waited for a writable upstream server")
                          .Register(*registry_)
                          .Add({})),
      selection_failures(
          BuildCounter()
              .Name("docguard_server_selection_failures_total")
              .Help("Client connections that found no writable upstream server within "
                    "serverSelectionTimeoutMS (their requests got error 133)")
              .Register(*registry_)
              .Add({})),
      selection_wait_seconds(BuildHistogram()
                                 .Name("docguard_server_selection_wait_seconds")
                                 .Help("How long client connections waited for a writable "
                                       "upstream server")
                                 .Register(*registry_)
                                 .Add({}, kSelectionBuckets)),
      budget_(settings.max_series),
      commands_(BuildCounter()
                    .Name("docguard_commands_total")
                    .Help("Commands seen, per collection")
                    .Register(*registry_)),
      app_commands_(BuildCounter()
                        .Name("docguard_app_commands_total")
                        .Help("Commands seen, per client app")
                        .Register(*registry_)),
      document_size_(BuildHistogram()
                         .Name("docguard_document_size_bytes")
                         .Help("Size of written documents and sampled read documents")
                         .Register(*registry_)),
      array_length_(BuildHistogram()
                        .Name("docguard_array_length")
                        .Help("Length of arrays in written and sampled documents, per field path")
                        .Register(*registry_)),
      array_push_(BuildCounter()
                      .Name("docguard_array_push_elements_total")
                      .Help("Elements appended by $push/$addToSet, per field path")
                      .Register(*registry_)),
      reads_(BuildCounter()
                 .Name("docguard_reads_total")
                 .Help("Read commands (find, aggregate, count, distinct), per collection")
                 .Register(*registry_)),
      reads_with_lookup_(
          BuildCounter()
              .Name("docguard_reads_with_lookup_total")
              .Help("Reads that join ($lookup/$graphLookup anywhere), per collection")
              .Register(*registry_)),
      lookups_(
          BuildCounter()
              .Name("docguard_lookup_total")
              .Help("$lookup/$graphLookup joins in reads, per collection and joined collection")
              .Register(*registry_)),
      violations_(BuildCounter()
                      .Name("docguard_violations_total")
                      .Help("Design-rule violations, by rule, action and client app")
                      .Register(*registry_)),
      candidate_violations_(BuildCounter()
                                .Name("docguard_candidate_violations_total")
                                .Help("Writes and reads a candidate rule (candidate_rules) would "
                                      "have warned about or blocked, by rule, action and client "
                                      "app; nothing was changed")
                                .Register(*registry_)),
      schema_unjudged_(BuildCounter()
                           .Name("docguard_schema_unjudged_total")
                           .Help("Operator updates a $jsonSchema rule could not judge without the "
                                 "stored document (passed, not guessed), per collection")
                           .Register(*registry_)),
      guardrail_unknown_(BuildCounter()
                             .Name("docguard_guardrail_unknown_total")
                             .Help("Operations the query guardrail (require_index) did not judge "
                                   "because the collection's indexes were not known yet")
                             .Register(*registry_)),
      unindexed_operations_(BuildCounter()
                                .Name("docguard_unindexed_operations_total")
                                .Help("Operations of a shape no known index serves (the workload "
                                      "ledger's judgement), by client app")
                                .Register(*registry_)),
      array_length_max_(BuildGauge()
                            .Name("docguard_array_length_max")
                            .Help("Longest array seen per field path since start")
                            .Register(*registry_)),
      array_length_bound_(BuildGauge()
                              .Name("docguard_array_length_bound")
                              .Help("Array length bound in force per field path (array_length, "
                                    "else max_array_length)")
                              .Register(*registry_)),
      topology_type_(BuildGauge()
                         .Name("docguard_cluster_topology_type")
                         .Help("1 for the upstream's current SDAM topology type (Unknown, Single, "
                               "ReplicaSetNoPrimary, ReplicaSetWithPrimary, Sharded, "
                               "LoadBalanced), 0 for the others")
                         .Register(*registry_)),
      upstream_connections_(BuildGauge()
                                .Name("docguard_upstream_connections")
                                .Help("Upstream connections open now, per upstream server")
                                .Register(*registry_)),
      findings_(BuildGauge()
                    .Name("docguard_findings")
                    .Help("Design advisor findings per collection, kind and severity (GET /report)")
                    .Register(*registry_)),
      series_budget_used_(BuildGauge()
                              .Name("docguard_metric_series")
                              .Help("Lines of /metrics taken from the series budget "
                                    "(metrics.max_series)")
                              .Register(*registry_)
                              .Add({})),
      series_over_budget_(BuildCounter()
                              .Name("docguard_metric_series_over_budget_total")
                              .Help("Updates of label sets the series budget refused, counted "
                                    "under \"_other\"")
                              .Register(*registry_)
                              .Add({})) {
  client_bytes_ = cells_.add(message_bytes_.Add({{"direction", "client_to_upstream"}}));
  upstream_bytes_ = cells_.add(message_bytes_.Add({{"direction", "upstream_to_client"}}));
  inspection_seconds_ =
      cells_.add(BuildHistogram()
                     .Name("docguard_inspection_seconds")
                     .Help("Time spent decoding a request and evaluating the rules")
                     .Register(*registry_)
                     .Add({}, kInspectionBuckets),
                 kInspectionBuckets);
  set_topology_type(cluster::TopologyType::kUnknown);
  BuildGauge()
      .Name("docguard_build_info")
      .Help("docguard build information")
      .Register(*registry_)
      .Add({{"version", DOCGUARD_VERSION}})
      .Set(1);
  // Pre-create the fixed label values so dashboards and alerts see zeros, not absences.
  for (const auto& error : codec::kUpstreamErrors) upstream_errors.get(codec::metric_label(error));
  for (const auto kind : codec::kProtocolErrorKinds) protocol_errors.get(codec::name(kind));
  for (const char* c : {"snappy", "zlib", "zstd"}) compressed_messages.get(c);
  for (const char* r : {"success", "failure"}) config_reloads.get(r);
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

}  // namespace docguard::proxy
