// The engine's state for /status and the array-field gauges.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "docguard/base/hash.h"
#include "docguard/base/json_writer.h"
#include "engine_internal.h"

namespace docguard::rules {

std::vector<Engine::ArrayFieldState> Engine::array_fields() const {
  std::vector<ArrayFieldState> out;
  for (CollectionStats* stats : namespaces_.all()) {
    std::lock_guard lock(stats->mutex);
    for (const auto& [field, fs] : stats->fields) {
      ArrayFieldState state{stats->db, stats->coll, field, static_cast<double>(fs.lengths.max()),
                            0};
      if (const auto& limits = stats->active.limits; limits != nullptr) {
        const Limit* limit = limits->array_limit_for(field);
        if (limit == nullptr || limit->empty()) limit = &limits->limit(RuleKind::kMaxArrayLength);
        if (!limit->empty()) state.bound = limit->min;
      }
      out.push_back(std::move(state));
    }
  }
  return out;
}

namespace {

// "NAME":[{"KEY":"...","violations":N}, ...] for the five names with the most violations.
void top_five(
    json::Writer& w, const char* name, const char* key,
    const std::unordered_map<std::string, uint64_t, base::StringHash, std::equal_to<>>& counts) {
  std::vector<std::pair<uint64_t, const std::string*>> top;
  top.reserve(counts.size());
  for (const auto& [label, n] : counts) top.emplace_back(n, &label);
  std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : *a.second < *b.second;
  });
  w.key(name).begin_array();
  for (size_t i = 0; i < top.size() && i < 5; ++i) {
    w.begin_object().member(key, *top[i].second).member("violations", top[i].first).end_object();
  }
  w.end_array();
}

void write_histogram(json::Writer& w, const char* name, const Histogram& h) {
  w.key(name).begin_object().member("count", h.count()).member("p50", h.quantile(0.5));
  w.member("p99", h.quantile(0.99)).member("max", h.max()).end_object();
}

void write_collection(json::Writer& w, const CollectionStats& stats,
                      std::chrono::steady_clock::time_point t) {
  w.begin_object().member("namespace", stats.db + "." + stats.coll);
  w.member("commands", stats.commands.load());
  write_histogram(w, "document_bytes", stats.document_bytes);
  write_histogram(w, "sampled_document_bytes", stats.sampled_document_bytes);
  w.key("arrays").begin_object();
  for (const auto& [path, field] : stats.fields) {
    w.key(path).begin_object().member("count", field.lengths.count());
    w.member("p99", field.lengths.quantile(0.99)).member("max", field.lengths.max());
    w.member("pushes", field.pushes).member("pushed_elements", field.pushed_elements);
    w.end_object();
  }
  w.end_object();
  const auto totals = stats.lookups.totals(t);
  w.key("lookup").begin_object().member("window_seconds", stats.lookups.window().count());
  w.member("reads", totals.reads).member("reads_with_lookup", totals.lookups);
  w.member("ratio", totals.ratio()).member("reads_total", stats.reads_total.load());
  w.member("reads_with_lookup_total", stats.lookup_reads_total).key("from").begin_object();
  for (const auto& [from, n] : stats.lookup_from) w.member(from, n);
  w.end_object().end_object();
  w.key("violations").begin_object();
  for (size_t k = 0; k < stats.violations.size(); ++k) {
    const auto& by_action = stats.violations[k];
    if (by_action[1] == 0 && by_action[2] == 0) continue;
    w.key(rule_name(static_cast<RuleKind>(k))).begin_object();
    w.member("warn", by_action[1]).member("block", by_action[2]).end_object();
  }
  w.end_object();
  top_five(w, "top_offenders", "app", stats.offenders);
  top_five(w, "top_users", "user", stats.offending_users);
  w.end_object();
}

}  // namespace

void Engine::write_status(json::Writer& w) const {
  const auto t = now();
  std::vector<CollectionStats*> all = namespaces_.all();
  std::sort(all.begin(), all.end(), [](const CollectionStats* a, const CollectionStats* b) {
    return std::tie(a->db, a->coll) < std::tie(b->db, b->coll);
  });
  const auto snapshot = snapshot_.load();
  w.member("mode", action_name(snapshot->rules->mode())).key("rules");
  write_rule_hits(w, *snapshot->hits);
  w.key("candidate_rules");
  if (snapshot->candidate_hits != nullptr) {
    write_rule_hits(w, *snapshot->candidate_hits);
  } else {
    w.begin_array().end_array();
  }
  w.member("tracked_documents", shape_.tracked_documents()).key("collections").begin_array();
  for (CollectionStats* stats : all) {
    std::lock_guard lock(stats->mutex);
    if (namespaces_.is_overflow(stats) && stats->commands.load() == 0 &&
        stats->document_bytes.count() == 0 && stats->sampled_document_bytes.count() == 0) {
      continue;
    }
    write_collection(w, *stats, t);
  }
  w.end_array().key("validators");
  write_validator_census(w, validator_census());
  w.key("guardrail").raw(guardrail_status_json());
}

std::string Engine::status_json() const {
  json::Writer w;
  w.begin_object();
  write_status(w);
  w.end_object();
  return w.take();
}

void write_validator_census(json::Writer& w, const std::vector<ValidatorCensus>& census) {
  // [{db, collection, rule, candidate, stored_sampled, stored_failing, failing_properties: {},
  //   writes_failing_by_app: {}}]
  w.begin_array();
  for (const ValidatorCensus& c : census) {
    w.begin_object().member("db", c.db).member("collection", c.collection);
    w.member("rule", c.rule).member("candidate", c.candidate);
    w.member("stored_sampled", c.stored_sampled).member("stored_failing", c.stored_failing);
    w.key("failing_properties").begin_object();
    for (const auto& [name, n] : c.failing_properties) w.member(name, n);
    w.end_object().key("writes_failing_by_app").begin_object();
    for (const auto& [app, n] : c.writes_failing_by_app) w.member(app, n);
    w.end_object().end_object();
  }
  w.end_array();
}

}  // namespace docguard::rules
