// The rule engine the proxy calls for every command: a thin front over a chain of checks
// (GuardrailCheck, ShapeCheck, SchemaCheck, LookupCheck; check_chain.h), each owning its own
// state, run phase by phase over what the command reads or writes, against the rules for its
// namespace. The workload ledger observes the verdict after them (WorkloadObserver). The engine
// keeps per-collection statistics (NamespaceRegistry) and returns a Verdict. Knows nothing of
// sockets; the conversation layer's request plan (docguard/conversation/request_plan.h) turns a
// Verdict into forwarded, rewritten or answered requests.
//
// Thread safety: inspect(), wants_reply_sample(), observe_reply() and status_json() may be
// called from any number of threads; reload() too. Each namespace has its own mutex, held only
// to update counters; documents are measured outside any lock.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "docguard/base/hash.h"
#include "docguard/base/json_writer.h"
#include "docguard/codec/command_view.h"
#include "docguard/codec/op_msg.h"
#include "docguard/rules/check_chain.h"
#include "docguard/rules/collection_stats.h"
#include "docguard/rules/command_pass.h"
#include "docguard/rules/document_tracker.h"
#include "docguard/rules/engine_sinks.h"
#include "docguard/rules/guardrail_check.h"
#include "docguard/rules/index_catalog.h"
#include "docguard/rules/lookup_check.h"
#include "docguard/rules/namespace_registry.h"
#include "docguard/rules/query_guardrail.h"
#include "docguard/rules/rule_hits.h"
#include "docguard/rules/rule_kinds.h"
#include "docguard/rules/rule_set.h"
#include "docguard/rules/schema_census.h"
#include "docguard/rules/schema_check.h"
#include "docguard/rules/shape_check.h"
#include "docguard/rules/verdict.h"
#include "docguard/rules/workload_ledger.h"
#include "docguard/rules/workload_observer.h"

namespace docguard::rules {

class Engine {
 public:
  using Clock = std::chrono::steady_clock;

  // Either sink may be null: the engine then skips its calls (and, with neither, the app label).
  Engine(std::shared_ptr<const RuleSet> rules, MeasurementSink* measurements, AdviceSink* advice);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Atomic swap; statistics, counters and tracked documents survive, and so do the hit
  // counters of each rule whose id (or key) is unchanged.
  void reload(std::shared_ptr<const RuleSet> rules);
  std::shared_ptr<const RuleSet> rules() const { return snapshot_.load()->rules; }

  // Hot path: one call per client command.
  Verdict inspect(const codec::CommandView& cmd, const RequestContext& ctx);
  // Whether to measure the documents of this read's reply (tracking.read_sample_rate).
  bool wants_reply_sample(const codec::CommandView& cmd);
  // Measures the documents of a cursor reply (cursor.firstBatch / cursor.nextBatch).
  void observe_reply(const codec::CommandView& request, const codec::OpMsg& reply);
  // A document docguard read from the database itself (introspection): its array lengths are
  // remembered, so a later $push onto it is judged against the bound. Any thread.
  void learn_stored_document(std::string_view db, std::string_view coll,
                             const codec::BsonView& document);
  // The reply to a catalog command (see AdviceSink::on_catalog_reply): passed to the advice
  // sink when it succeeded.
  void observe_catalog_reply(const codec::CommandView& request, const codec::OpMsg& reply);
  // Per collection: document size p50/p99/max, array max/p99 per field, $lookup ratio,
  // violations by rule and action, top offending client apps and users.
  // Also the hit counters of every rule and candidate rule (top-level `rules` and
  // `candidate_rules`). write_status writes them as members of the object `w` has open, so
  // /status adds its own members to the same object.
  void write_status(json::Writer& w) const;
  std::string status_json() const;
  // Each $jsonSchema validator's census: sampled stored documents failing it, the properties
  // failing most, and writes failing it per app over the last hour (/report.json `validators`).
  std::vector<ValidatorCensus> validator_census() const { return schema_.census(now()); }
  // What each candidate rule would have done, per client app (the live report's table).
  std::vector<CandidateVerdicts> candidate_verdicts() const;

  // The longest array seen per field path and the bound in force for it (0: none), for
  // gauges computed when metrics are scraped rather than on the hot path.
  struct ArrayFieldState {
    std::string db, coll, field;
    double max_length = 0;
    double bound = 0;
  };
  std::vector<ArrayFieldState> array_fields() const;

  // When each growing array of a tracked document reaches its bounds (the rule's array length
  // and document size bounds, and 16 MB), per namespace, field and limit, soonest first. Walks
  // the tracker: for scrapes and reports.
  std::vector<PathForecast> limit_forecasts() const;
  // A document whose forecast falls under this many seconds is logged once (advisor.
  // forecast_horizon; default 7 days). Any thread.
  void set_forecast_horizon(double seconds) { shape_.set_forecast_horizon(seconds); }
  double forecast_horizon() const { return shape_.forecast_horizon(); }
  // What the query guardrail judges queries against (index_catalog.h): fed by introspection and
  // by the catalog replies observe_catalog_reply() sees.
  IndexCatalog& index_catalog() { return guardrail_.catalog(); }
  // The query guardrail's part of /status: operations not judged for want of indexes per
  // namespace, the `allow` exceptions (expired or not), the namespaces whose indexes are known.
  std::string guardrail_status_json() const;
  // The workload ledger (workload_ledger.h): fed by inspect(), replies recorded by the
  // conversation.
  WorkloadLedger& workload() { return workload_.ledger(); }
  // Its snapshot, each shape judged against the indexes known now (indexed, index).
  WorkloadSnapshot workload_report() const { return workload_.report(); }

  // Another clock than the steady one (nullptr restores it): tests fix it, whatif runs on the
  // recording's clock.
  void set_clock(std::function<Clock::time_point()> clock);

 private:
  // The rules in force with their hit counters, and the candidate rules with theirs: swapped
  // together by reload(), read once per command.
  struct RuleSnapshot {
    std::shared_ptr<const RuleSet> rules;
    std::shared_ptr<const RuleHitsTable> hits;
    std::shared_ptr<const RuleSet> candidates;  // null without candidate_rules
    std::shared_ptr<const RuleHitsTable> candidate_hits;
  };
  static std::shared_ptr<const RuleSnapshot> snapshot_with(std::shared_ptr<const RuleSet> rules,
                                                           const RuleSnapshot* previous);
  // One pass over a command: with the rules in force (the verdict), or with the candidate
  // rules as a dry run (nothing recorded, only the candidate counters move).
  void judge(const codec::CommandView& cmd, const RequestContext& ctx, const RuleSnapshot& judged,
             bool dry_run, Verdict& verdict);
  // The namespace's statistics, within the bound of the rules in force (`in_force`, never the
  // candidates: the registry is shared by both passes).
  CollectionStats* stats_for(std::string_view db, std::string_view coll, const RuleSet& in_force) {
    return namespaces_.find_or_add(db, coll, in_force.tracking().max_namespaces);
  }
  // The namespace's limits under `rules`. Held by this thread's cache: valid until the thread
  // asks for other limits twice (one answer back is kept, should a call ever come within a
  // pass), so for a whole pass; no reference count moves on each command.
  const NamespaceLimits* limits_for(CollectionStats* stats, std::string_view db,
                                    std::string_view coll, const RuleSet& rules, uint32_t scope = 0,
                                    bool candidate = false);
  // limits_for past the thread's last answer: out of line, so the common case sets up no frame
  // for the namespace's lock.
  [[gnu::noinline]] const NamespaceLimits* limits_past_last(CollectionStats* stats,
                                                            std::string_view db,
                                                            std::string_view coll,
                                                            const RuleSet& rules, uint32_t scope,
                                                            bool candidate);
  // limits_for's answer from the namespace's own cache (under its lock).
  static std::shared_ptr<const NamespaceLimits> resolved_limits(CollectionStats* stats,
                                                                std::string_view db,
                                                                std::string_view coll,
                                                                const RuleSet& rules,
                                                                uint32_t scope, bool candidate);
  // The connection's scope id under `rules` (0 without scoped rules: no call on that path).
  static uint32_t scope_of(const RequestContext& ctx, const RuleSet& rules,
                           bool candidate = false) {
    return rules.has_scoped_rules() ? find_scope(ctx, rules, candidate) : 0;
  }
  static uint32_t find_scope(const RequestContext& ctx, const RuleSet& rules, bool candidate);
  // $out / $merge, mapReduce's out, applyOps' writes: counted as unjudged on a target with a
  // $jsonSchema rule (engine_writes_elsewhere.cc).
  void count_writes_elsewhere(const codec::CommandView& cmd, const RequestContext& ctx,
                              const RuleSet& rules);
  const std::string& app_label(std::string_view app, uint32_t max_apps);
  // app_label past this thread's last app: out of line, so the common case sets up no frame
  // for the locks and the set.
  [[gnu::noinline]] const std::string& app_label_slow(std::string_view app, uint32_t max_apps);
  // A write statement down the chain of checks: every check judges it, then every check
  // learns from it (engine_writes.cc). The statement is read from the command first: an
  // inserted document, an update or delete statement (with its query's parts), a bulkWrite op,
  // a findAndModify.
  template <typename Statement>
  void judge_statement(CommandPass& s, const Statement& statement);
  void judge_insert(CommandPass& s, const codec::BsonView& doc, int32_t index);
  void judge_update(CommandPass& s, const codec::BsonView& q, const codec::BsonView& u,
                    bool pipeline, bool upsert, int32_t index, const QueryParts* query);
  void judge_delete(CommandPass& s, const codec::BsonView& q, int32_t index,
                    const QueryParts* query);
  void judge_update_statement(CommandPass& s, const codec::BsonView& statement, int32_t index);
  void judge_delete_statement(CommandPass& s, const codec::BsonView& statement, int32_t index);
  void judge_find_and_modify(CommandPass& s);
  void inspect_bulk_write(const codec::CommandView& cmd, const RequestContext& ctx,
                          const RuleSnapshot& judged, bool dry_run, Verdict& verdict);
  // The workload observer after the verdict (`dry`: the candidate rules' verdict, when there
  // are candidate rules), and the sink told of the operations no known index serves.
  void observe_workload(const codec::CommandView& cmd, const RequestContext& ctx,
                        const RuleSet& rules, const Verdict* dry, Verdict& verdict);
  void report(CommandPass& s, size_t first_violation);
  void report_candidates(CommandPass& s, size_t first_violation);
  Clock::time_point now() const;
  double seconds_now() const;

  std::atomic<std::shared_ptr<const RuleSnapshot>> snapshot_;
  // Raised after each store to snapshot_: a thread's copy (thread_snapshot) is taken again only
  // then. An atomic shared_ptr's load takes its lock and counts a reference, on every command.
  std::atomic<uint64_t> snapshot_version_{0};
  // The snapshot in force as this thread last took it, valid until this thread's next call
  // (on an entry point: inspect, wants_reply_sample; they never nest).
  const RuleSnapshot& thread_snapshot();
  const RuleSnapshot& take_thread_snapshot(uint64_t version);
  std::mutex reload_mutex_;  // one reload at a time: each carries over from the one before
  MeasurementSink* measurements_;
  AdviceSink* advice_;
  // Tells this engine's entries in a thread's app label cache from another engine's.
  const uint64_t id_;

  using StringHash = base::StringHash;
  NamespaceRegistry namespaces_;

  // App names with their own label on violation counters (tracking.max_apps), for the
  // process's life: a label once given stays, so a series is never renamed.
  std::shared_mutex apps_mutex_;
  std::unordered_set<std::string, StringHash, std::equal_to<>> known_apps_;

  // The checks, each with its own state, and the chain that runs them in its order: the
  // guardrail first (the server plans a statement's query before it writes), then the shape's
  // bounds before the $jsonSchema rules (of a document both refuse, the client hears of its
  // bounds, as before the chain), and the $lookup window.
  GuardrailCheck guardrail_;
  ShapeCheck shape_;
  SchemaCheck schema_;
  LookupCheck lookup_;
  using Checks = CheckChain<GuardrailCheck, ShapeCheck, SchemaCheck, LookupCheck>;
  Checks checks() { return Checks(guardrail_, shape_, schema_, lookup_); }
  WorkloadObserver workload_;  // after guardrail_: it reads the guardrail's index catalog
  std::function<Clock::time_point()> clock_;
};

}  // namespace docguard::rules
