// The engine's front: namespace registry, dispatch of one command to its checks, and the
// rate-limited reporting of what was found.
#include "docguard/rules/engine.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>

#include "docguard/base/short_equal.h"
#include "engine_internal.h"

namespace docguard::rules {

namespace {
std::atomic<uint64_t> g_next_engine_id{1};

// A thread's copy of an engine's snapshot: trivial, so reading it costs no TLS wrapper call.
struct ThreadSnapshot {
  uint64_t engine = 0;  // the engine's id_ (never reused)
  uint64_t version = 0;
  const void* snapshot = nullptr;
};
constinit thread_local ThreadSnapshot t_snapshot;
// What keeps t_snapshot's snapshot alive, and the one before it: should a call on another
// engine ever come within an inspection on this thread, the snapshot in use stays alive.
thread_local std::shared_ptr<const void> t_snapshot_owner, t_snapshot_previous;
}  // namespace

Engine::Engine(std::shared_ptr<const RuleSet> rules, MeasurementSink* measurements,
               AdviceSink* advice)
    : measurements_(measurements),
      advice_(advice),
      id_(g_next_engine_id.fetch_add(1)),
      guardrail_(measurements),
      shape_(measurements, advice, rules->tracking()),
      schema_(measurements),
      lookup_(measurements, advice),
      workload_(guardrail_.catalog()) {
  snapshot_.store(snapshot_with(std::move(rules), nullptr));
}

Engine::~Engine() = default;

std::shared_ptr<const Engine::RuleSnapshot> Engine::snapshot_with(
    std::shared_ptr<const RuleSet> rules, const RuleSnapshot* previous) {
  auto snapshot = std::make_shared<RuleSnapshot>();
  snapshot->hits =
      std::make_shared<const RuleHitsTable>(*rules, previous ? previous->hits.get() : nullptr);
  snapshot->candidates = rules->candidates();
  if (snapshot->candidates != nullptr) {
    snapshot->candidate_hits = std::make_shared<const RuleHitsTable>(
        *snapshot->candidates, previous ? previous->candidate_hits.get() : nullptr);
  }
  snapshot->rules = std::move(rules);
  return snapshot;
}

void Engine::reload(std::shared_ptr<const RuleSet> rules) {
  std::lock_guard lock(reload_mutex_);
  shape_.set_tracking(rules->tracking());
  snapshot_.store(snapshot_with(std::move(rules), snapshot_.load().get()));
  // After the store: a thread that sees the new version takes the new snapshot.
  snapshot_version_.fetch_add(1, std::memory_order_release);
}

const Engine::RuleSnapshot& Engine::thread_snapshot() {
  const uint64_t version = snapshot_version_.load(std::memory_order_acquire);
  if (t_snapshot.engine == id_ && t_snapshot.version == version) {
    return *static_cast<const RuleSnapshot*>(t_snapshot.snapshot);
  }
  return take_thread_snapshot(version);
}

const Engine::RuleSnapshot& Engine::take_thread_snapshot(uint64_t version) {
  // The version read before the snapshot: a reload in between is taken again next time.
  std::shared_ptr<const RuleSnapshot> snapshot = snapshot_.load();
  const RuleSnapshot& taken = *snapshot;
  t_snapshot = {id_, version, &taken};
  t_snapshot_previous = std::exchange(t_snapshot_owner, std::move(snapshot));
  return taken;
}

void Engine::set_clock(std::function<Clock::time_point()> clock) { clock_ = std::move(clock); }

Engine::Clock::time_point Engine::now() const { return clock_ ? clock_() : Clock::now(); }

const NamespaceLimits* Engine::limits_for(CollectionStats* stats, std::string_view db,
                                          std::string_view coll, const RuleSet& rules,
                                          uint32_t scope, bool candidate) {
  // The thread's last answer for the same namespace, rule set and scope: the same limits, without
  // the namespace's lock. Namespace ids and rule set generations are never reused.
  const Scratch::LastLimits& last = scratch().last_limits[candidate ? 1 : 0];
  if (last.limits != nullptr && last.namespace_id == stats->labels.id &&
      last.generation == rules.generation() && last.scope == scope) {
    return last.limits.get();
  }
  return limits_past_last(stats, db, coll, rules, scope, candidate);
}

const NamespaceLimits* Engine::limits_past_last(CollectionStats* stats, std::string_view db,
                                                std::string_view coll, const RuleSet& rules,
                                                uint32_t scope, bool candidate) {
  Scratch::LastLimits& last = scratch().last_limits[candidate ? 1 : 0];
  if (namespaces_.is_overflow(stats)) {
    // The overflow bucket is shared by many namespaces: resolved each time (rare by design),
    // and held without being remembered for the next lookup (its id matches no namespace's).
    last.hold(std::make_shared<const NamespaceLimits>(rules.resolve(db, coll, scope)));
    last.namespace_id = 0;
    return last.limits.get();
  }
  last.hold(resolved_limits(stats, db, coll, rules, scope, candidate));
  last.namespace_id = stats->labels.id;
  last.generation = rules.generation();
  last.scope = scope;
  return last.limits.get();
}

std::shared_ptr<const NamespaceLimits> Engine::resolved_limits(CollectionStats* stats,
                                                               std::string_view db,
                                                               std::string_view coll,
                                                               const RuleSet& rules, uint32_t scope,
                                                               bool candidate) {
  std::lock_guard lock(stats->mutex);
  CollectionStats::ResolvedLimits& cache = candidate ? stats->candidate : stats->active;
  if (cache.limits == nullptr || cache.generation != rules.generation()) {
    cache.limits = std::make_shared<const NamespaceLimits>(rules.resolve(db, coll));
    cache.generation = rules.generation();
    cache.scoped.clear();
  }
  if (scope == 0) return cache.limits;
  for (const auto& [id, limits] : cache.scoped) {
    if (id == scope) return limits;
  }
  auto limits = std::make_shared<const NamespaceLimits>(rules.resolve(db, coll, scope));
  if (cache.scoped.size() < CollectionStats::kMaxScopedLimits)
    cache.scoped.emplace_back(scope, limits);
  return limits;
}

uint32_t Engine::find_scope(const RequestContext& ctx, const RuleSet& rules, bool candidate) {
  if (ctx.scope != nullptr) return ctx.scope->id(rules, ctx.app_name, ctx.user, candidate);
  const auto address = parse_peer_address(ctx.peer);
  return rules.scope_of(ClientIdentity{ctx.app_name, ctx.user, address ? &*address : nullptr});
}

const std::string& Engine::app_label(std::string_view app, uint32_t max_apps) {
  static const std::string kNone;
  if (app.empty()) return kNone;
  // Every command is labelled for the advisor: a connection's commands mostly repeat one app,
  // and the thread's last answer spares them the shared lock.
  const Scratch& sc = scratch();
  if (sc.last_app_label != nullptr && sc.last_app_engine == id_ && sc.last_app_max == max_apps &&
      base::same_text(sc.last_app, app)) {
    return *sc.last_app_label;
  }
  return app_label_slow(app, max_apps);
}

const std::string& Engine::app_label_slow(std::string_view app, uint32_t max_apps) {
  static const std::string kOther(kOverflowLabel);
  Scratch& sc = scratch();
  const std::string* label = &kOther;
  {
    std::shared_lock lock(apps_mutex_);
    if (auto it = known_apps_.find(app); it != known_apps_.end()) label = &*it;
  }
  if (label == &kOther) {
    std::unique_lock lock(apps_mutex_);
    if (auto it = known_apps_.find(app); it != known_apps_.end()) {
      label = &*it;
    } else if (known_apps_.size() < max_apps) {
      label = &*known_apps_.emplace(app).first;
    }
  }
  sc.last_app_engine = id_;
  sc.last_app_max = max_apps;
  sc.last_app.assign(app);
  sc.last_app_label = label;
  return *label;
}

Verdict Engine::inspect(const codec::CommandView& cmd, const RequestContext& ctx) {
  Verdict verdict;
  const RuleSnapshot* const snapshot = &thread_snapshot();
  Scratch& sc = scratch();
  checks().run<phase::BeginCommand>();
  sc.judged_stats = nullptr;
  // Only with candidate rules: what they would have done, for the workload ledger too. On the
  // heap then, and only then: an empty optional of a Verdict costs its setup on every command.
  std::unique_ptr<Verdict> dry;
  if (snapshot->candidates != nullptr) {
    dry = std::make_unique<Verdict>();
    // First, so that tracked array lengths are read before the real pass grows them.
    judge(cmd, ctx, *snapshot, true, *dry);
  }
  judge(cmd, ctx, *snapshot, false, verdict);
  auto& blocked = verdict.blocked_statements;
  std::sort(blocked.begin(), blocked.end());
  blocked.erase(std::unique(blocked.begin(), blocked.end()), blocked.end());
  observe_workload(cmd, ctx, *snapshot->rules, dry.get(), verdict);
  return verdict;
}

void Engine::observe_workload(const codec::CommandView& cmd, const RequestContext& ctx,
                              const RuleSet& rules, const Verdict* dry, Verdict& verdict) {
  const CollectionStats* stats = scratch().judged_stats;
  const uint32_t unindexed = workload_.observe(cmd, ctx.app_name, stats, dry, verdict);
  if (unindexed == 0 || measurements_ == nullptr) return;
  const std::string& app = app_label(ctx.app_name, rules.tracking().max_apps);
  for (uint32_t i = 0; i < unindexed; ++i)
    measurements_->on_unindexed_operation(stats->labels, app);
}

std::string Engine::guardrail_status_json() const {
  const auto snapshot = snapshot_.load();
  return guardrail_.status_json(namespaces_, snapshot->rules.get(), snapshot->candidates.get());
}

void Engine::judge(const codec::CommandView& cmd, const RequestContext& ctx,
                   const RuleSnapshot& snapshot, bool dry_run, Verdict& verdict) {
  const RuleSet* rules = dry_run ? snapshot.candidates.get() : snapshot.rules.get();
  if (!dry_run && (cmd.kind == CommandKind::kAggregate || cmd.kind == CommandKind::kOther)) {
    count_writes_elsewhere(cmd, ctx, *rules);
  }
  if (cmd.kind == CommandKind::kBulkWrite) {
    inspect_bulk_write(cmd, ctx, snapshot, dry_run, verdict);
  } else {
    if (cmd.collection.empty() || cmd.database.empty() || cmd.kind == CommandKind::kHello) {
      return;
    }
    CollectionStats* stats = stats_for(cmd.database, cmd.collection, *snapshot.rules);
    std::string_view app;
    if (!dry_run) {
      scratch().judged_stats = stats;
      stats->commands.fetch_add(1, std::memory_order_relaxed);
      if (measurements_ != nullptr || advice_ != nullptr) {
        app = app_label(ctx.app_name, rules->tracking().max_apps);
        if (measurements_ != nullptr) {
          measurements_->on_command(stats->labels, cmd.name, app);
        }
        if (advice_ != nullptr) advice_->on_request(stats->db, stats->coll, cmd, app);
      }
    }
    switch (cmd.kind) {
      case CommandKind::kInsert:
      case CommandKind::kUpdate:
      case CommandKind::kDelete:
      case CommandKind::kFindAndModify:
      case CommandKind::kFind:
      case CommandKind::kAggregate:
      case CommandKind::kCount:
      case CommandKind::kDistinct:
        break;
      case CommandKind::kExplain:
        if (cmd.explained == "aggregate" || cmd.explained == "find" || cmd.explained == "count" ||
            cmd.explained == "distinct") {
          break;
        }
        return;
      case CommandKind::kCreate:
        if (!dry_run) checks().run<phase::LearnDefinition>(cmd, *rules);
        return;
      default:
        return;
    }
    CommandPass s{cmd,
                  ctx,
                  *rules,
                  verdict,
                  stats,
                  limits_for(stats, cmd.database, cmd.collection, *rules,
                             scope_of(ctx, *rules, dry_run), dry_run),
                  cmd.database,
                  cmd.collection,
                  &clock_};
    s.hits = dry_run ? snapshot.candidate_hits.get() : snapshot.hits.get();
    s.dry_run = dry_run;
    s.app = app;
    checks().run<phase::Start>(s);
    switch (cmd.kind) {
      case CommandKind::kInsert:
        for (size_t i = 0; i < cmd.statements.size() && !s.batch_stopped(); ++i) {
          judge_insert(s, cmd.statements[i], static_cast<int32_t>(i));
        }
        break;
      case CommandKind::kUpdate:
        for (size_t i = 0; i < cmd.statements.size() && !s.batch_stopped(); ++i) {
          judge_update_statement(s, cmd.statements[i], static_cast<int32_t>(i));
        }
        break;
      case CommandKind::kDelete:
        for (size_t i = 0; i < cmd.statements.size() && !s.batch_stopped(); ++i) {
          judge_delete_statement(s, cmd.statements[i], static_cast<int32_t>(i));
        }
        break;
      case CommandKind::kFindAndModify:
        judge_find_and_modify(s);
        break;
      default:
        checks().run<phase::JudgeRead>(s);
        break;
    }
    // Most commands break no rule: they skip the call, whose frame costs more than the test.
    if (!verdict.violations.empty()) report(s, 0);
  }
}

void Engine::report(CommandPass& s, size_t first) {
  auto& violations = s.verdict.violations;
  if (violations.size() <= first) return;
  if (s.dry_run) {
    report_candidates(s, first);
    return;
  }
  Scratch& sc = scratch();
  auto& decisions = sc.log_decisions;
  decisions.clear();
  const auto t = now();
  {
    std::lock_guard lock(s.stats->mutex);
    for (size_t i = first; i < violations.size(); ++i) {
      const auto kind = static_cast<size_t>(violations[i].kind);
      ++s.stats->violations[kind][static_cast<size_t>(violations[i].action)];
      s.stats->count_offender(s.ctx.app_name, kMaxOffenders);
      s.stats->count_offending_user(s.ctx.user, kMaxOffenders);
      auto& last = s.stats->last_log[kind];
      if (last == Clock::time_point{} || t - last >= CollectionStats::kLogInterval) {
        decisions.push_back({true, s.stats->suppressed[kind]});
        s.stats->suppressed[kind] = 0;
        last = t;
      } else {
        ++s.stats->suppressed[kind];
        decisions.push_back({false, 0});
      }
    }
  }
  const std::string_view app =
      measurements_ != nullptr
          ? std::string_view(app_label(s.ctx.app_name, s.rules.tracking().max_apps))
          : std::string_view();
  const int64_t unix_ms = wall_ms();
  for (size_t i = first; i < violations.size(); ++i) {
    const Violation& v = violations[i];
    if (v.hits != nullptr) v.hits->count(v.action, unix_ms);
    if (measurements_ != nullptr) {
      measurements_->on_violation(s.stats->labels, rule_name(v.kind), v.action, app);
    }
    const auto& d = decisions[i - first];
    if (!d.log) continue;
    log::Fields fields;
    fields.add("rule", rule_name(v.kind)).add("action", action_name(v.action));
    s.add_violation_fields(fields, v, d.suppressed);
    if (const Violation::UnindexedQuery& q = v.unindexed_query(); !q.shape.empty()) {
      fields.add("shape", q.shape).add("index", index_keys_text(q.suggested_index));
    }
    spdlog::warn("{}", fields.message("docguard design rule violated"));
  }
}

}  // namespace docguard::rules
