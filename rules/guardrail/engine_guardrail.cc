// The query guardrail in the engine: for each read (find, aggregate's leading $match/$sort,
// count, distinct, findAndModify) and each write statement (update, delete, bulkWrite ops) of a
// namespace some applying rule says `require_index` for, whether a known index serves the
// filter. Unserved: a violation of rule "require_index" (warn or block, or a candidate's count),
// unless an unexpired `allow` entry names the shape. Indexes not known: counted, never refused.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <set>

#include "../engine_internal.h"
#include "docguard/rules/query_guardrail.h"

namespace docguard::rules {

namespace {

// Counts an operation the guardrail could not judge, once per command whichever pass saw it.
bool first_unknown_of_command() {
  Scratch& sc = scratch();
  if (sc.guardrail_unknown_counted) return false;
  sc.guardrail_unknown_counted = true;
  return true;
}

}  // namespace

void Engine::guard_read(CommandPass& s) {
  if (s.limits->guardrail.require_index == Action::kOff || exempt_namespace(s.db, s.coll)) return;
  // describe() found find's filter and findAndModify's, count's and distinct's query: the
  // common served cases need no other walk of the command.
  if (s.cmd.kind != CommandKind::kAggregate) {
    // {_id: <scalar>} is served whatever else is known: no lookup of the namespace's indexes.
    if (s.cmd.query_scalar_key() == "_id") return;
  }
  // A collation of the command's own decides which indexes compare its strings alike.
  const bool asked = s.cmd.kind != CommandKind::kAggregate && s.cmd.collation.empty();
  if (asked && obviously_served(s.cmd.query, index_catalog_.find_cached(s.db, s.coll))) return;
  QueryParts parts = query_parts(s.cmd);
  // judge_plan would ask the same of the same filter (a non-aggregate's filter is cmd.query):
  // once per command is enough.
  parts.not_obviously_served = asked;
  guard_query(s, parts, -1);
}

void Engine::guard_query(CommandPass& s, const QueryParts& parts, int32_t index) {
  const GuardrailLimits& g = s.limits->guardrail;
  if (g.require_index == Action::kOff || exempt_namespace(s.db, s.coll)) return;
  const NamespaceIndexes* indexes = index_catalog_.find_cached(s.db, s.coll);
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
      std::lock_guard lock(guardrail_->mutex);
      log = guardrail_->expired_logged
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

void Engine::limit_time(CommandPass& s) {
  const GuardrailLimits& g = s.limits->guardrail;
  const bool read = s.cmd.is_read();
  const bool write = s.cmd.kind == CommandKind::kInsert || s.cmd.kind == CommandKind::kUpdate ||
                     s.cmd.kind == CommandKind::kDelete ||
                     s.cmd.kind == CommandKind::kFindAndModify;
  if (!(read || (write && g.max_time_ms_writes)) || s.cmd.more_to_come) return;
  if (s.cmd.has_max_time) return;  // the client's own limit stands, whatever it is
  s.verdict.max_time_ms = g.max_time_ms;
}

std::string Engine::guardrail_status_json() const {
  std::string out = "{\"unknown\":{";
  {
    std::shared_lock lock(namespaces_mutex_);
    bool first = true;
    for (const auto& [ns, stats] : namespaces_) {
      const uint64_t n = stats->guardrail_unknown.load(std::memory_order_relaxed);
      if (n == 0) continue;
      out += first ? "" : ",";
      first = false;
      json::append_string(out, ns);
      out += ":" + std::to_string(n);
    }
    const uint64_t other = overflow_->guardrail_unknown.load(std::memory_order_relaxed);
    if (other > 0)
      out += std::string(first ? "" : ",") + "\"_other._other\":" + std::to_string(other);
  }
  out += "},\"exceptions\":[";
  const auto snapshot = snapshot_.load();
  const int64_t now_ms = wall_ms();
  bool first = true;
  auto list = [&](const RuleSet* rules, bool candidate) {
    if (rules == nullptr) return;
    for (const Rule& r : rules->rules()) {
      for (const AllowedShape& a : r.guardrail.allow) {
        out += first ? "" : ",";
        first = false;
        out += "{";
        json::append_string_members(out, {{"rule", r.id.empty() ? r.match : r.id}});
        out += ",\"candidate\":";
        out += candidate ? "true" : "false";
        out += ",";
        json::append_string_members(out,
                                    {{"shape", a.shape}, {"owner", a.owner}, {"until", a.until}});
        out += ",\"expired\":";
        out += now_ms >= a.expires_unix_ms ? "true" : "false";
        out += "}";
      }
    }
  };
  list(snapshot->rules.get(), false);
  list(snapshot->candidates.get(), true);
  out += "],\"indexes\":" + index_catalog_.status_json() + "}";
  return out;
}

}  // namespace docguard::rules
