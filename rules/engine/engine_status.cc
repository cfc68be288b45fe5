// The engine's state for /status and the array-field gauges.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "docguard/base/hash.h"
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
        if (limit == nullptr || limit->empty()) limit = &limits->array_length_any;
        if (!limit->empty()) state.bound = limit->min;
      }
      out.push_back(std::move(state));
    }
  }
  return out;
}

namespace {

// ,"NAME":[{"KEY":"...","violations":N}, ...] for the five names with the most violations.
void top_five(
    std::string& out, const char* name, const char* key,
    const std::unordered_map<std::string, uint64_t, base::StringHash, std::equal_to<>>& counts) {
  std::vector<std::pair<uint64_t, const std::string*>> top;
  top.reserve(counts.size());
  for (const auto& [label, n] : counts) top.emplace_back(n, &label);
  std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : *a.second < *b.second;
  });
  fmt::format_to(std::back_inserter(out), ",\"{}\":[", name);
  for (size_t i = 0; i < top.size() && i < 5; ++i) {
    if (i > 0) out.push_back(',');
    fmt::format_to(std::back_inserter(out), "{{\"{}\":", key);
    json::append_string(out, *top[i].second);
    fmt::format_to(std::back_inserter(out), ",\"violations\":{}}}", top[i].first);
  }
  out += "]";
}

}  // namespace

std::string Engine::status_json() const {
  const auto t = now();
  std::vector<CollectionStats*> all = namespaces_.all();
  std::sort(all.begin(), all.end(), [](const CollectionStats* a, const CollectionStats* b) {
    return std::tie(a->db, a->coll) < std::tie(b->db, b->coll);
  });
  const auto snapshot = snapshot_.load();
  std::string out;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "{{\"mode\":\"{}\",\"rules\":", action_name(snapshot->rules->mode()));
  append_rule_hits_json(out, *snapshot->hits);
  out += ",\"candidate_rules\":";
  if (snapshot->candidate_hits != nullptr) {
    append_rule_hits_json(out, *snapshot->candidate_hits);
  } else {
    out += "[]";
  }
  fmt::format_to(o, ",\"tracked_documents\":{},\"collections\":[", shape_.tracked_documents());
  bool first_ns = true;
  for (CollectionStats* stats : all) {
    std::lock_guard lock(stats->mutex);
    if (namespaces_.is_overflow(stats) && stats->commands.load() == 0 &&
        stats->document_bytes.count() == 0 && stats->sampled_document_bytes.count() == 0) {
      continue;
    }
    if (!first_ns) out.push_back(',');
    first_ns = false;
    out += "{\"namespace\":";
    json::append_string(out, stats->db + "." + stats->coll);
    auto histogram = [&](const char* name, const Histogram& h) {
      fmt::format_to(o, ",\"{}\":{{\"count\":{},\"p50\":{},\"p99\":{},\"max\":{}}}", name,
                     h.count(), h.quantile(0.5), h.quantile(0.99), h.max());
    };
    fmt::format_to(o, ",\"commands\":{}", stats->commands.load());
    histogram("document_bytes", stats->document_bytes);
    histogram("sampled_document_bytes", stats->sampled_document_bytes);
    out += ",\"arrays\":{";
    bool first = true;
    for (const auto& [path, field] : stats->fields) {
      if (!first) out.push_back(',');
      first = false;
      json::append_string(out, path);
      fmt::format_to(o,
                     ":{{\"count\":{},\"p99\":{},\"max\":{},\"pushes\":{},\"pushed_elements\":{}}}",
                     field.lengths.count(), field.lengths.quantile(0.99), field.lengths.max(),
                     field.pushes, field.pushed_elements);
    }
    out += "}";
    const auto totals = stats->lookups.totals(t);
    fmt::format_to(o,
                   ",\"lookup\":{{\"window_seconds\":{},\"reads\":{},\"reads_with_lookup\":{},"
                   "\"ratio\":{},\"reads_total\":{},\"reads_with_lookup_total\":{},\"from\":{{",
                   stats->lookups.window().count(), totals.reads, totals.lookups, totals.ratio(),
                   stats->reads_total, stats->lookup_reads_total);
    first = true;
    for (const auto& [from, n] : stats->lookup_from) {
      if (!first) out.push_back(',');
      first = false;
      json::append_string(out, from);
      fmt::format_to(o, ":{}", n);
    }
    out += "}},\"violations\":{";
    first = true;
    for (size_t k = 0; k < stats->violations.size(); ++k) {
      const auto& by_action = stats->violations[k];
      if (by_action[1] == 0 && by_action[2] == 0) continue;
      if (!first) out.push_back(',');
      first = false;
      fmt::format_to(o, "\"{}\":{{\"warn\":{},\"block\":{}}}", rule_name(static_cast<RuleKind>(k)),
                     by_action[1], by_action[2]);
    }
    out += "}";
    top_five(out, "top_offenders", "app", stats->offenders);
    top_five(out, "top_users", "user", stats->offending_users);
    out += "}";
  }
  out += "],\"validators\":";
  append_validator_census_json(out, validator_census());
  out += ",\"guardrail\":" + guardrail_status_json() + "}";
  return out;
}

void append_validator_census_json(std::string& out, const std::vector<ValidatorCensus>& census) {
  // [{db, collection, rule, candidate, stored_sampled, stored_failing, failing_properties: {},
  //   writes_failing_by_app: {}}]
  out += "[";
  for (size_t i = 0; i < census.size(); ++i) {
    const ValidatorCensus& c = census[i];
    if (i > 0) out.push_back(',');
    out += "{";
    json::append_string_members(out,
                                {{"db", c.db}, {"collection", c.collection}, {"rule", c.rule}});
    fmt::format_to(std::back_inserter(out),
                   ",\"candidate\":{},\"stored_sampled\":{},\"stored_failing\":{}", c.candidate,
                   c.stored_sampled, c.stored_failing);
    for (const auto* part : {&c.failing_properties, &c.writes_failing_by_app}) {
      out += part == &c.failing_properties ? ",\"failing_properties\":{"
                                           : ",\"writes_failing_by_app\":{";
      bool first = true;
      for (const auto& [name, n] : *part) {
        if (!first) out.push_back(',');
        first = false;
        json::append_string(out, name);
        fmt::format_to(std::back_inserter(out), ":{}", n);
      }
      out += "}";
    }
    out += "}";
  }
  out += "]";
}

}  // namespace docguard::rules
