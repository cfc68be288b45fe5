// The one table of the metric families docguard exports: name, type, labels and help. The code
// registers every family from here (register_family), the labelled series take their label
// names from here, and a test checks /metrics and docs/metrics.md against it.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace docguard::telemetry {

enum class MetricType : uint8_t { kCounter, kGauge, kHistogram };

// The histograms' bucket upper bounds, beside their families in the table.
namespace buckets {
inline constexpr double kDocumentBytes[] = {256,     1024,    4096,    16384,   65536,    262144,
                                            1048576, 2097152, 4194304, 8388608, 12582912, 16777216};
inline constexpr double kArrayLength[] = {1,   5,    10,   25,   50,    100,  250,
                                          500, 1000, 2500, 5000, 10000, 50000};
inline constexpr double kSelectionWaitSeconds[] = {0.01, 0.05, 0.1, 0.25, 0.5, 1,
                                                   2.5,  5,    10,  30,   60};
inline constexpr double kInspectionSeconds[] = {1e-6, 2e-6,   5e-6, 1e-5, 2.5e-5, 5e-5,
                                                1e-4, 2.5e-4, 1e-3, 1e-2, 1e-1};
inline constexpr double kIntrospectionSeconds[] = {1, 5, 15, 60, 300, 900, 3600};
}  // namespace buckets

struct MetricFamily {
  std::string_view name;
  MetricType type;
  // The label names in the order the code passes their values, comma-separated ("" for none).
  // A family labelled by namespace starts with "db,collection".
  std::string_view labels;
  std::string_view help;
  // For the families counted on every message: the family's slot in each thread's cells
  // (ThreadCells::find), unique among them; -1 for the others.
  int8_t cells_slot = -1;
  // A histogram's bucket upper bounds (empty for the other types).
  std::span<const double> buckets = {};

  std::vector<std::string> label_names() const;
  prometheus::Histogram::BucketBoundaries bucket_bounds() const {
    return {buckets.begin(), buckets.end()};
  }
  bool by_namespace() const { return labels.starts_with("db,collection"); }
};

namespace family {
using enum MetricType;

// Connections and bytes.
inline constexpr MetricFamily kConnectionsTotal{"docguard_connections_total", kCounter, "",
                                                "Client connections accepted"};
inline constexpr MetricFamily kConnectionsActive{"docguard_connections_active", kGauge, "",
                                                 "Client connections open now"};
inline constexpr MetricFamily kConnectionsRejected{
    "docguard_connections_rejected_total", kCounter, "",
    "Client connections refused because max_connections was reached"};
inline constexpr MetricFamily kMessageBytes{"docguard_message_bytes_total", kCounter, "direction",
                                            "Wire-protocol bytes relayed, by direction"};
inline constexpr MetricFamily kCompressedMessages{
    "docguard_compressed_messages_total", kCounter, "compressor",
    "OP_COMPRESSED messages received from clients, by compressor"};
inline constexpr MetricFamily kInspectionSeconds{
    "docguard_inspection_seconds",
    kHistogram,
    "",
    "Time spent decoding a request and evaluating the rules",
    -1,
    buckets::kInspectionSeconds};
inline constexpr MetricFamily kAnsweredByProxy{
    "docguard_requests_answered_by_proxy_total", kCounter, "",
    "Requests docguard answered itself (blocked writes, upstream down)"};
inline constexpr MetricFamily kProtocolErrors{
    "docguard_protocol_errors_total", kCounter, "kind",
    "Malformed or refused messages, by kind; each closes its connection"};

// The upstream and its cluster.
inline constexpr MetricFamily kUpstreamErrors{"docguard_upstream_errors_total", kCounter, "kind",
                                              "Upstream connection failures, by kind"};
inline constexpr MetricFamily kUpstreamUp{
    "docguard_upstream_up", kGauge, "",
    "1 if the upstream accepted the last connection attempt (sessions, /readyz, scrapes)"};
inline constexpr MetricFamily kPrimaryChanges{
    "docguard_cluster_primary_changes_total", kCounter, "",
    "Changes of the upstream's writable servers (failovers) seen by docguard's topology monitor"};
inline constexpr MetricFamily kSelectionWaits{
    "docguard_server_selection_waits_total", kCounter, "",
    "Client connections that waited for a writable upstream server"};
inline constexpr MetricFamily kSelectionFailures{
    "docguard_server_selection_failures_total", kCounter, "",
    "Client connections that found no writable upstream server within serverSelectionTimeoutMS "
    "(their requests got error 133)"};
inline constexpr MetricFamily kSelectionWaitSeconds{
    "docguard_server_selection_wait_seconds",
    kHistogram,
    "",
    "How long client connections waited for a writable upstream server",
    -1,
    buckets::kSelectionWaitSeconds};
inline constexpr MetricFamily kTopologyType{
    "docguard_cluster_topology_type", kGauge, "type",
    "1 for the upstream's current SDAM topology type (Unknown, Single, ReplicaSetNoPrimary, "
    "ReplicaSetWithPrimary, Sharded, LoadBalanced), 0 for the others"};
inline constexpr MetricFamily kUpstreamConnections{
    "docguard_upstream_connections", kGauge, "server",
    "Upstream connections open now, per upstream server"};

// What the rules engine measures, per namespace and per app.
inline constexpr MetricFamily kCommands{"docguard_commands_total", kCounter,
                                        "db,collection,command", "Commands seen, per collection",
                                        0};
inline constexpr MetricFamily kAppCommands{"docguard_app_commands_total", kCounter, "app,command",
                                           "Commands seen, per client app", 1};
inline constexpr MetricFamily kDocumentSize{"docguard_document_size_bytes",
                                            kHistogram,
                                            "db,collection,source",
                                            "Size of written documents and sampled read documents",
                                            2,
                                            buckets::kDocumentBytes};
inline constexpr MetricFamily kArrayLength{
    "docguard_array_length",
    kHistogram,
    "db,collection,field",
    "Length of arrays in written and sampled documents, per field path",
    3,
    buckets::kArrayLength};
inline constexpr MetricFamily kArrayPush{"docguard_array_push_elements_total", kCounter,
                                         "db,collection,field",
                                         "Elements appended by $push/$addToSet, per field path", 4};
inline constexpr MetricFamily kArrayLengthMax{"docguard_array_length_max", kGauge,
                                              "db,collection,field",
                                              "Longest array seen per field path since start"};
inline constexpr MetricFamily kArrayLengthBound{
    "docguard_array_length_bound", kGauge, "db,collection,field",
    "Array length bound in force per field path (array_length, else max_array_length)"};
inline constexpr MetricFamily kReads{
    "docguard_reads_total", kCounter, "db,collection",
    "Read commands (find, aggregate, count, distinct), per collection", 5};
inline constexpr MetricFamily kReadsWithLookup{
    "docguard_reads_with_lookup_total", kCounter, "db,collection",
    "Reads that join ($lookup/$graphLookup anywhere), per collection", 6};
inline constexpr MetricFamily kLookups{
    "docguard_lookup_total", kCounter, "db,collection,from",
    "$lookup/$graphLookup joins in reads, per collection and joined collection", 7};
inline constexpr MetricFamily kViolations{
    "docguard_violations_total", kCounter, "db,collection,rule,action,app",
    "Design-rule violations, by rule, action and client app", 8};
inline constexpr MetricFamily kCandidateViolations{
    "docguard_candidate_violations_total", kCounter, "db,collection,rule,action,app",
    "Writes and reads a candidate rule (candidate_rules) would have warned about or blocked, by "
    "rule, action and client app; nothing was changed",
    9};
inline constexpr MetricFamily kSchemaUnjudged{
    "docguard_schema_unjudged_total", kCounter, "db,collection",
    "Operator updates a $jsonSchema rule could not judge without the stored document (passed, "
    "not guessed), per collection",
    10};
inline constexpr MetricFamily kSchemaBypassed{
    "docguard_schema_bypassed_total", kCounter, "db,collection,app",
    "Writes a $jsonSchema rule let through unjudged because they set bypassDocumentValidation, "
    "as the server does, by client app",
    13};
inline constexpr MetricFamily kGuardrailUnknown{
    "docguard_guardrail_unknown_total", kCounter, "db,collection",
    "Operations the query guardrail (require_index) did not judge because the collection's "
    "indexes were not known yet",
    11};

inline constexpr MetricFamily kUnindexedOperations{
    "docguard_unindexed_operations_total", kCounter, "db,collection,app",
    "Operations of a shape no known index serves (the workload ledger's judgement), by client app",
    12};

// The advisor, set at scrape time.
inline constexpr MetricFamily kFindings{
    "docguard_findings", kGauge, "db,collection,kind,severity",
    "Design advisor findings per collection, kind and severity (GET /report)"};
inline constexpr MetricFamily kLimitEta{
    "docguard_limit_eta_seconds", kGauge, "db,collection,field,limit",
    "Seconds until the soonest tracked document's growing array reaches a limit (array_length, "
    "document_bytes: the rule's bounds; 16MB), at its recent growth rate; the nearest few per "
    "namespace"};

// Introspection: docguard's own reads of the cluster.
inline constexpr MetricFamily kIntrospectionRuns{
    "docguard_introspection_runs_total", kCounter, "result",
    "Introspection passes (docguard's own reads of the cluster), by result"};
inline constexpr MetricFamily kIntrospectionSeconds{
    "docguard_introspection_seconds",   kHistogram, "",
    "Duration of introspection passes", -1,         buckets::kIntrospectionSeconds};
inline constexpr MetricFamily kIntrospectionCommands{"docguard_introspection_commands_total",
                                                     kCounter, "",
                                                     "Commands docguard sent to read the cluster"};
inline constexpr MetricFamily kIntrospectionUnknownFacts{
    "docguard_introspection_unknown_facts", kGauge, "",
    "Facts the last pass could not read (rights, server support)"};
inline constexpr MetricFamily kCollectionDocuments{
    "docguard_collection_documents", kGauge, "db,collection",
    "Documents in the collection, from the server's statistics"};
inline constexpr MetricFamily kCollectionSizeBytes{
    "docguard_collection_size_bytes", kGauge, "db,collection",
    "Uncompressed data size of the collection, from the server"};

// The process and the exposition itself.
inline constexpr MetricFamily kConfigReloads{"docguard_config_reloads_total", kCounter, "result",
                                             "Configuration reloads (SIGHUP), by result"};
// The traffic recorder (docs/recording.md).
inline constexpr MetricFamily kRecordingPackets{
    "docguard_recording_packets_total", kCounter, "",
    "Packets (requests, replies, session events) written to traffic recordings"};
inline constexpr MetricFamily kRecordingDropped{
    "docguard_recording_dropped_total", kCounter, "",
    "Messages not recorded because the recording's queue was full (the recording failed)"};
inline constexpr MetricFamily kRecordingFailures{
    "docguard_recording_failures_total", kCounter, "reason",
    "Recordings that failed, by reason (queue_full, write_error); traffic went on"};
inline constexpr MetricFamily kBuildInfo{"docguard_build_info", kGauge, "version",
                                         "docguard build information"};
inline constexpr MetricFamily kMetricSeries{
    "docguard_metric_series", kGauge, "",
    "Lines of /metrics taken from the series budget (metrics.max_series)"};
inline constexpr MetricFamily kMetricSeriesOverBudget{
    "docguard_metric_series_over_budget_total", kCounter, "",
    "Updates of label sets the series budget refused, counted under \"_other\""};

}  // namespace family

// Every family above, in the order docs/metrics.md lists them.
std::span<const MetricFamily> metric_families();

// Registers `f` in `registry`; its type must match the template's (checked where it is called:
// a mismatch throws std::logic_error at start-up, long before any scrape).
template <typename Metric>
prometheus::Family<Metric>& register_family(prometheus::Registry& registry, const MetricFamily& f);

}  // namespace docguard::telemetry
