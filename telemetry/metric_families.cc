#include "docguard/telemetry/metric_families.h"

#include <array>
#include <stdexcept>
#include <type_traits>

namespace docguard::telemetry {

std::vector<std::string> MetricFamily::label_names() const {
  std::vector<std::string> names;
  std::string_view rest = labels;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    names.emplace_back(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return names;
}

std::span<const MetricFamily> metric_families() {
  using namespace family;
  static constexpr std::array kAll = {kCommands,
                                      kAppCommands,
                                      kDocumentSize,
                                      kArrayLength,
                                      kArrayLengthMax,
                                      kArrayLengthBound,
                                      kArrayPush,
                                      kReads,
                                      kReadsWithLookup,
                                      kLookups,
                                      kViolations,
                                      kCandidateViolations,
                                      kSchemaUnjudged,
                                      kSchemaBypassed,
                                      kGuardrailUnknown,
                                      kUnindexedOperations,
                                      kFindings,
                                      kLimitEta,
                                      kConnectionsActive,
                                      kConnectionsTotal,
                                      kConnectionsRejected,
                                      kUpstreamErrors,
                                      kUpstreamUp,
                                      kTopologyType,
                                      kPrimaryChanges,
                                      kUpstreamConnections,
                                      kSelectionWaits,
                                      kSelectionFailures,
                                      kSelectionWaitSeconds,
                                      kProtocolErrors,
                                      kMessageBytes,
                                      kCompressedMessages,
                                      kCollectionDocuments,
                                      kCollectionSizeBytes,
                                      kIntrospectionRuns,
                                      kIntrospectionSeconds,
                                      kIntrospectionCommands,
                                      kIntrospectionUnknownFacts,
                                      kInspectionSeconds,
                                      kAnsweredByProxy,
                                      kConfigReloads,
                                      kRecordingPackets,
                                      kRecordingDropped,
                                      kRecordingFailures,
                                      kBuildInfo,
                                      kMetricSeries,
                                      kMetricSeriesOverBudget};
  return kAll;
}

template <typename Metric>
prometheus::Family<Metric>& register_family(prometheus::Registry& registry, const MetricFamily& f) {
  constexpr MetricType kType = std::is_same_v<Metric, prometheus::Counter> ? MetricType::kCounter
                               : std::is_same_v<Metric, prometheus::Gauge> ? MetricType::kGauge
                                                                           : MetricType::kHistogram;
  if (f.type != kType)
    throw std::logic_error("metric family of another type: " + std::string(f.name));
  const auto build = [] {
    if constexpr (kType == MetricType::kCounter) return prometheus::BuildCounter();
    if constexpr (kType == MetricType::kGauge) return prometheus::BuildGauge();
    if constexpr (kType == MetricType::kHistogram) return prometheus::BuildHistogram();
  };
  return build().Name(std::string(f.name)).Help(std::string(f.help)).Register(registry);
}

template prometheus::Family<prometheus::Counter>& register_family(prometheus::Registry&,
                                                                  const MetricFamily&);
template prometheus::Family<prometheus::Gauge>& register_family(prometheus::Registry&,
                                                                const MetricFamily&);
template prometheus::Family<prometheus::Histogram>& register_family(prometheus::Registry&,
                                                                    const MetricFamily&);

}  // namespace docguard::telemetry
