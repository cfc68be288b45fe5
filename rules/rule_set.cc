#include "docguard/rules/rule_set.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cmath>

#include "docguard/base/short_equal.h"

namespace docguard::rules {

namespace {

// Adds an applying rule's guardrail keys to the namespace's.
void add_guardrail(GuardrailLimits& limits, const Rule& rule) {
  const GuardrailRule& g = rule.guardrail;
  if (g.require_index && rule.action > limits.require_index) {
    limits.require_index = rule.action;
    limits.rule_name = rule.id.empty() ? rule.match : rule.id;
    limits.match = rule.match;
    limits.line = rule.line;
    limits.rule = rule.index;
  }
  if (g.require_index) limits.allow.insert(limits.allow.end(), g.allow.begin(), g.allow.end());
  if (g.max_time_ms > 0 && (limits.max_time_ms == 0 || g.max_time_ms < limits.max_time_ms)) {
    limits.max_time_ms = g.max_time_ms;
  }
  limits.max_time_ms_writes = limits.max_time_ms_writes || g.max_time_ms_writes;
}

}  // namespace

void Limit::add(double value, Action action, const Rule& rule) {
  if (action == Action::kOff) return;
  bounds.push_back(Bound{value, action, rule.match, rule.line, rule.index});
  min = std::min(min, value);
}

const Bound* Limit::pick(double measured) const {
  const Bound* best = nullptr;
  for (const Bound& b : bounds) {
    if (!(measured > b.value)) continue;
    if (best == nullptr || b.action > best->action ||
        (b.action == best->action && b.value < best->value)) {
      best = &b;
    }
  }
  return best;
}

const Bound* Limit::strictest() const {
  const Bound* best = nullptr;
  for (const Bound& b : bounds) {
    if (best == nullptr || b.value < best->value) best = &b;
  }
  return best;
}

const Limit* NamespaceLimits::array_limit_for(std::string_view path) const {
  for (const auto& [p, limit] : array_length_by_path) {
    if (base::same_text(p, path)) return &limit;
  }
  return nullptr;
}

namespace {
std::atomic<uint64_t> g_generation{0};
}

RuleSet::RuleSet(Action mode, std::vector<Rule> rules, TrackingLimits tracking,
                 std::shared_ptr<const RuleSet> candidates)
    : mode_(mode),
      rules_(std::move(rules)),
      tracking_(tracking),
      candidates_(std::move(candidates)),
      generation_(++g_generation) {
  for (uint32_t i = 0; i < rules_.size(); ++i) {
    rules_[i].index = i;
    if (!rules_[i].scope.empty() && rules_[i].action != Action::kOff) scoped_.push_back(i);
  }
  std::vector<uint64_t> none((scoped_.size() + 63) / 64, 0);
  scope_ids_.emplace(none, 0);
  scope_bits_.push_back(std::move(none));
}

uint32_t RuleSet::scope_of(const ClientIdentity& who) const {
  if (scoped_.empty()) return 0;
  std::vector<uint64_t> bits((scoped_.size() + 63) / 64, 0);
  for (size_t i = 0; i < scoped_.size(); ++i) {
    if (scope_matches(rules_[scoped_[i]].scope, who)) bits[i / 64] |= uint64_t{1} << (i % 64);
  }
  std::lock_guard lock(scopes_mutex_);
  auto [it, added] = scope_ids_.try_emplace(bits, static_cast<uint32_t>(scope_bits_.size()));
  if (added) scope_bits_.push_back(std::move(bits));
  return it->second;
}

NamespaceLimits RuleSet::resolve(std::string_view db, std::string_view coll, uint32_t scope) const {
  NamespaceLimits out;
  std::string ns;
  ns.reserve(db.size() + coll.size() + 1);
  ns.append(db).append(".").append(coll);
  std::vector<uint64_t> bits;
  if (!scoped_.empty()) {
    std::lock_guard lock(scopes_mutex_);
    bits = scope_bits_.at(scope < scope_bits_.size() ? scope : 0);
  }
  bool window_set = false;
  size_t scoped_index = 0;  // position of the next scoped rule in scoped_
  for (uint32_t i = 0; i < rules_.size(); ++i) {
    const Rule& r = rules_[i];
    if (r.action == Action::kOff) continue;
    bool applies = true;
    if (scoped_index < scoped_.size() && scoped_[scoped_index] == i) {
      applies = (bits[scoped_index / 64] >> (scoped_index % 64)) & 1;
      ++scoped_index;
    }
    if (!glob_match(r.match, ns)) continue;
    out.tracks_arrays = out.tracks_arrays || r.has_array_bounds();
    if (!applies) continue;
    // The kinds bounded by a size or a count: each rule's bound joins the kind's limit.
    for (size_t k = 0; k < kRuleKindCount; ++k) {
      const RuleKey key = rule_kind(static_cast<RuleKind>(k)).key;
      if ((key == RuleKey::kBytes || key == RuleKey::kCount) && r.bounds[k]) {
        out.limits[k].add(*r.bounds[k], r.action, r);
      }
    }
    if (r.json_schema) {
      out.schemas.push_back({r.json_schema, Bound{0, r.action, r.match, r.line, r.index},
                             r.schema_moderate, r.honor_bypass});
    }
    for (const auto& [path, bound] : r.array_length) {
      Limit* limit = nullptr;
      for (auto& [p, l] : out.array_length_by_path) {
        if (p == path) limit = &l;
      }
      if (limit == nullptr) limit = &out.array_length_by_path.emplace_back(path, Limit{}).second;
      limit->add(bound, r.action, r);
    }
    if (r.require_push_slice && r.action > out.push_slice_action) {
      out.push_slice_action = r.action;
      out.push_slice_match = r.match;
      out.push_slice_line = r.line;
      out.push_slice_rule = r.index;
    }
    if (r.guardrail.any()) add_guardrail(out.guardrail, r);
    if (const auto& ratio = r.bound(RuleKind::kMaxLookupRatio)) {
      // Reads are blocked only by a rule that says so itself.
      Action a = r.action_explicit ? r.action : std::min(r.action, Action::kWarn);
      out.limit(RuleKind::kMaxLookupRatio).add(*ratio, a, r);
      // Several windows: the shortest one reacts fastest, and the stats keep one window.
      if (!window_set || r.lookup_window < out.lookup_window) out.lookup_window = r.lookup_window;
      if (!window_set || r.lookup_min_reads < out.lookup_min_reads) {
        out.lookup_min_reads = r.lookup_min_reads;
      }
      window_set = true;
    }
  }
  // The tracker follows the arrays candidate rules bound too, or their tracked lengths would
  // never be known.
  for (size_t i = 0; candidates_ != nullptr && !out.tracks_arrays && i < candidates_->rules_.size();
       ++i) {
    const Rule& r = candidates_->rules_[i];
    out.tracks_arrays = r.action != Action::kOff && r.has_array_bounds() && glob_match(r.match, ns);
  }
  return out;
}

std::string normalize_field_path(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  while (!path.empty()) {
    size_t dot = path.find('.');
    std::string_view part = path.substr(0, dot);
    bool positional = !part.empty() &&
                      (part[0] == '$' || std::all_of(part.begin(), part.end(),
                                                     [](char c) { return c >= '0' && c <= '9'; }));
    if (!positional && !part.empty()) {
      if (!out.empty()) out.push_back('.');
      out.append(part);
    }
    if (dot == std::string_view::npos) break;
    path.remove_prefix(dot + 1);
  }
  return out;
}

}  // namespace docguard::rules
