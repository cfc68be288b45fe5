// The live design advisor: per-collection data taken from the commands the proxy already
// inspects (as the rules engine's rules::AdviceSink), and the findings only traffic shows
// (unbounded $push, $lookup ratio, unindexed references, query shapes no index serves, repeated
// $group, case-insensitive $regex, subset reads, bucket rate, writes without a validator) beside
// the document, index and collection detectors of the offline scan (on what docguard reads of the
// cluster).
//
// Cost and memory: commands, reads and pushes are sampled (1 in `live_sample_every`, a counter
// each) before any lock, so every count is in sampled units; a sampled command's query shapes
// are built before the lock too, and counted up to `query_shapes_per_collection` per collection;
// namespaces are bounded by `live_max_namespaces` (the rules engine already folds namespaces past
// tracking.max_namespaces into "_other"), and every per-collection map by a small cap.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "docguard/advisor/collection_profile.h"
#include "docguard/advisor/finding.h"
#include "docguard/advisor/limit_forecasts.h"
#include "docguard/advisor/query_shape.h"
#include "docguard/advisor/report.h"
#include "docguard/advisor/settings.h"
#include "docguard/advisor/shared_facts.h"
#include "docguard/codec/command_view.h"
#include "docguard/rules/engine_sinks.h"
#include "docguard/rules/workload_ledger.h"

namespace docguard::advisor {

class LiveAdvisor final : public rules::AdviceSink {
 public:
  explicit LiveAdvisor(const AdvisorSettings& settings);
  ~LiveAdvisor() override;

  // rules::AdviceSink, called by the rules engine. Thread-safe. `app`: the client's app as the
  // engine labels it ("" for none), counted per namespace so traffic findings name their apps.
  void on_request(std::string_view db, std::string_view coll, const codec::CommandView& cmd,
                  std::string_view app) override;
  void on_unbounded_push(std::string_view db, std::string_view coll, std::string_view field,
                         double elements, std::string_view app) override;
  void on_read(std::string_view db, std::string_view coll, bool with_lookup,
               std::string_view app) override;
  // A catalog command's successful reply: indexes, validators and collections follow at once.
  void on_catalog_reply(const codec::CommandView& request, const codec::BsonView& reply) override;

  // Introspection: docguard's own reads of the cluster. Thread-safe.
  // Whether facts about indexes and validators will come from the cluster: then findings that
  // need them wait for them (and name them as unknown) instead of judging from traffic alone.
  void expect_cluster_facts(bool expected);
  // One collection as the cluster holds it: its metadata (source "cluster": indexes, validator,
  // statistics, and what could not be read) and the profile of its sampled documents. Replaces
  // what the last pass said of it. `read_at`: Unix seconds.
  void on_cluster_collection(std::unique_ptr<CollectionProfile> stored, double read_at);
  // One collection as another instance of the fleet read it (the introspection lease): its
  // metadata and the findings of its sample stand in for a sample of this instance's own.
  void on_shared_collection(SharedCollection shared);
  // A full pass ended: collections of `databases_read` that it did not read no longer exist.
  void on_cluster_pass(const std::vector<std::string>& databases_read,
                       const std::vector<std::string>& namespaces_read);

  // Collections traffic reached that no pass has read (created since, or past the last pass's
  // bound), at most `max`: each is handed out once, for a read of its own between passes.
  std::vector<std::pair<std::string, std::string>> take_unread_namespaces(size_t max);
  bool has_cluster_facts(std::string_view db, std::string_view coll) const;

  // Per collection, for /status and gauges: what is known of it and when it was last read.
  struct CollectionFacts {
    CollectionMetadata metadata;
    bool cluster_facts = false;
    uint64_t sampled_documents = 0;
    double read_at = 0;  // Unix seconds, 0: never read
  };
  std::vector<CollectionFacts> collection_facts() const;

  // Where the growth forecasts come from (the rules engine's tracked documents): called by
  // findings() and render(), outside the advisor's lock. Set once, before traffic.
  void set_forecast_source(std::function<std::vector<rules::PathForecast>()> source);

  // The proxy's workload ledger. While it is on (max_shapes above 0), the traffic's query shapes
  // are the ledger's, read when findings are made: it counts every operation's shape on the
  // message path already, so no request builds shapes of its own here. Set once, before traffic.
  void set_workload_ledger(const rules::WorkloadLedger* ledger);

  std::vector<Finding> findings() const;
  std::string render(ReportFormat format, std::vector<ReportSection> sections = {}) const;

  // For tests: time in seconds used for insert rates (default: steady clock).
  void set_clock(double (*clock)());

  struct Namespace;

 private:
  // 1 in live_sample_every calls, decided before any lock. The sink's entry points only ask
  // this, so the calls not sampled (most) return before any frame is set up; the sampled ones
  // go on in these.
  bool sampled(std::atomic<uint64_t>& counter);
  void on_sampled_request(std::string_view db, std::string_view coll, const codec::CommandView& cmd,
                          std::string_view app);
  void on_sampled_read(std::string_view db, std::string_view coll, bool with_lookup,
                       std::string_view app);
  Namespace* state_for(std::string_view db, std::string_view coll);              // mutex held
  Namespace* find_or_add_namespace(std::string_view db, std::string_view coll);  // mutex held
  void observe_locked(Namespace& ns, const codec::CommandView& cmd);
  // Query shapes of one findings pass by namespace ("db.coll"), with the sampling their counts
  // are in: the ledger's (exact), else each namespace's own (sampled).
  struct TrafficShapes {
    std::map<std::string, QueryShapeCounter, std::less<>> by_namespace;
    bool from_ledger = false;
  };
  // Outside the advisor's lock (the ledger's locks, not ours).
  TrafficShapes ledger_shapes() const;
  bool shapes_from_ledger() const;
  void detect_locked(std::vector<Finding>& out, const std::vector<ApproachingLimit>& approaching,
                     const TrafficShapes& shapes) const;
  // The forecast's rows, soonest first, with the apps that grow each field.
  std::vector<ApproachingLimit> approaching_locked(
      const std::vector<rules::PathForecast>& forecasts) const;
  std::vector<rules::PathForecast> forecasts() const;
  void detect_documents_locked(const Namespace& ns, std::vector<Finding>& out) const;
  void detect_unindexed_locked(const Namespace& ns, const TrafficShapes& shapes,
                               std::vector<Finding>& out) const;
  std::set<std::string> detect_unindexed_queries_locked(const Namespace& ns,
                                                        const TrafficShapes& shapes,
                                                        std::vector<Finding>& out) const;
  void detect_index_list_locked(const Namespace& ns, std::vector<Finding>& out) const;
  void detect_collections_locked(std::vector<Finding>& out) const;
  void detect_validator_locked(const Namespace& ns, std::vector<Finding>& out) const;
  void name_apps_locked(const Namespace& ns, std::vector<Finding>& out, size_t first) const;
  std::vector<std::string> unknown_facts_locked() const;
  ReportInput report_locked(const std::vector<rules::PathForecast>& forecasts,
                            const TrafficShapes& shapes) const;

  AdvisorSettings settings_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Namespace>, std::less<>> namespaces_;
  // state_for's last answer; null again whenever a namespace is erased (mutex_).
  Namespace* last_namespace_ = nullptr;
  std::atomic<uint64_t> sample_counter_{0}, read_counter_{0}, push_counter_{0};
  double (*clock_)() = nullptr;
  bool expect_cluster_facts_ = false;
  std::function<std::vector<rules::PathForecast>()> forecast_source_;
  const rules::WorkloadLedger* workload_ledger_ = nullptr;
};

}  // namespace docguard::advisor
