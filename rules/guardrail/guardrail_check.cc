// The query guardrail's check: the served cases found without a walk of the command, the plan
// judgement for the rest, the `allow` exceptions, and its part of /status.
#include "docguard/rules/guardrail_check.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <set>

#include "docguard/base/json_writer.h"

namespace docguard::rules {

namespace {

// The guardrail counted the thread's command as not judged (indexes unknown) already.
thread_local bool t_unknown_counted = false;

// Counts an operation the guardrail could not judge, once per command whichever pass saw it.
bool first_unknown_of_command() {
  if (t_unknown_counted) return false;
  t_unknown_counted = true;
  return true;
}

}  // namespace

void GuardrailCheck::begin_command() { t_unknown_counted = false; }

void GuardrailCheck::judge_read(CommandPass& s) {
  if (s.limits->guardrail.require_index == Action::kOff) return;
  if (s.cmd.kind == CommandKind::kExplain) return;  // an explain runs no plan: never refused
  // describe() found find's filter and findAndModify's, count's and distinct's query: the
  // common served cases need no other walk of the command. Not when something else decides the
  // plan: a hint ({$natural: 1} forces a collection scan whatever the filter), a $natural sort,
  // a tailable cursor (a collection scan on a capped collection); describe() tells them.
  // {_id: <scalar>} is served whatever else is known: no lookup of the namespace's indexes,
  // nor of whether the namespace is exempt.
  if (!s.cmd.plan_forced && s.cmd.kind != CommandKind::kAggregate &&
      s.cmd.query_scalar_key() == "_id") {
    return;
  }
  if (exempt_namespace(s.db, s.coll)) return;
  // A collation of the command's own decides which indexes compare its strings alike.
  const bool asked =
      !s.cmd.plan_forced && s.cmd.kind != CommandKind::kAggregate && s.cmd.collation.empty();
  if (asked && obviously_served(s.cmd.query, catalog_.find_cached(s.db, s.coll))) return;
  QueryParts parts = query_parts(s.cmd);
  // judge_plan would ask the same of the same filter (a non-aggregate's filter is cmd.query):
  // once per command is enough.
  parts.not_obviously_served = asked;
  judge_query(s, parts, -1);
}

void GuardrailCheck::judge_query(CommandPass& s, const QueryParts& parts, int32_t index) {
  const GuardrailLimits& g = s.limits->guardrail;
  if (g.require_index == Action::kOff || exempt_namespace(s.db, s.coll)) return;
  const NamespaceIndexes* indexes = catalog_.find_cached(s.db, s.coll);
  IndexKeys suggestion;
  const PlanJudgement judgement = judge_plan(parts, indexes, &suggestion);
  switch (judgement.verdict) {
    case IndexVerdict::kServed:
      return;
    case IndexVerdict::kUnknown:
      if (first_unknown_of_command()) {
        s.stats->guardrail_unknown.fetch_add(1, std::memory_order_relaxed);
        if (measurements_ != nullptr) measurements_->on_guardrail_unknown(s.stats->labels);
      }
      return;
    case IndexVerdict::kUnserved:
      break;
  }
  // A whole read's shape is its filter, sort and projection (the text errInfo gives and `allow`
  // takes); a write statement's is its filter.
  std::string shape;
  // A cut text is the start of a longer shape: no entry names that shape in full, so none
  // applies (an entry's text could equal the cut one).
  const bool cut = append_shape_text(shape, parts);
  const int64_t now_ms = wall_ms();
  for (const AllowedShape& allowed : g.allow) {
    if (cut || allowed.shape != shape) continue;
    if (now_ms < allowed.expires_unix_ms) return;
    // Expired: it no longer applies. Said once per entry, not per query.
    bool log = false;
    {
      std::lock_guard lock(expired_mutex_);
      log = expired_logged_
                .insert(fmt::format("{}|{}|{}", allowed.line, allowed.shape, allowed.until))
                .second;
    }
    if (log) {
      log::Fields fields;
      fields.add("rule", g.rule_name)
          .add("shape", allowed.shape)
          .add("owner", allowed.owner)
          .add("until", allowed.until)
          .add("line", static_cast<int64_t>(allowed.line));
      spdlog::warn("{}", fields.message("guardrail exception expired: it no longer applies"));
    }
  }
  const Bound bound{0, g.require_index, g.match, g.line, g.rule};
  s.add(RuleKind::kRequireIndex, bound, "", 0, index, nullptr);
  s.verdict.violations.back().specifics = Violation::UnindexedQuery{
      g.rule_name, std::move(shape), std::move(suggestion), judgement.reason};
}

void GuardrailCheck::limit_time(CommandPass& s) {
  const GuardrailLimits& g = s.limits->guardrail;
  const bool read = s.cmd.is_read();
  const bool write = s.cmd.kind == CommandKind::kInsert || s.cmd.kind == CommandKind::kUpdate ||
                     s.cmd.kind == CommandKind::kDelete ||
                     s.cmd.kind == CommandKind::kFindAndModify;
  if (!(read || (write && g.max_time_ms_writes)) || s.cmd.more_to_come) return;
  if (s.cmd.has_max_time) return;  // the client's own limit stands, whatever it is
  s.verdict.max_time_ms = g.max_time_ms;
}

std::string GuardrailCheck::status_json(const NamespaceRegistry& namespaces, const RuleSet* rules,
                                        const RuleSet* candidates) const {
  json::Writer w;
  w.begin_object().key("unknown").begin_object();
  namespaces.for_each([&](const std::string& ns, const CollectionStats& stats) {
    const uint64_t n = stats.guardrail_unknown.load(std::memory_order_relaxed);
    if (n != 0) w.member(ns, n);
  });
  const uint64_t other = namespaces.overflow().guardrail_unknown.load(std::memory_order_relaxed);
  if (other > 0) w.member("_other._other", other);
  w.end_object().key("exceptions").begin_array();
  const int64_t now_ms = wall_ms();
  auto list = [&](const RuleSet* set, bool candidate) {
    if (set == nullptr) return;
    for (const Rule& r : set->rules()) {
      for (const AllowedShape& a : r.guardrail.allow) {
        w.begin_object().member("rule", r.id.empty() ? r.match : r.id);
        w.member("candidate", candidate).member("shape", a.shape).member("owner", a.owner);
        w.member("until", a.until).member("expired", now_ms >= a.expires_unix_ms).end_object();
      }
    }
  };
  list(rules, false);
  list(candidates, true);
  w.end_array().key("indexes").raw(catalog_.status_json()).end_object();
  return w.take();
}

}  // namespace docguard::rules
