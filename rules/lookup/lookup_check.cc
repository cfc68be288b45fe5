// The $lookup check: a read's joins found in its pipeline and its view, counted in the
// namespace's window, and the window's ratio judged.
#include "docguard/rules/lookup_check.h"

#include <string_view>
#include <utility>

#include "docguard/rules/command_pass.h"
#include "docguard/rules/lookup_walker.h"
#include "docguard/rules/namespace_registry.h"

namespace docguard::rules {

namespace {

// Upper bound on `from` collections named per namespace.
constexpr uint32_t kMaxLookupFroms = 32;

// The check's thread-local state: vectors keep their capacity, so steady-state reads do not
// allocate.
struct LookupScratch {
  std::vector<Join> joins;
  std::vector<std::string> view_joins;
  std::vector<const std::string*> labels;
  std::string ns;
  const std::string& ns_of(std::string_view db, std::string_view coll) {
    if (!is_namespace_key(ns, db, coll)) write_namespace_key(ns, db, coll);
    return ns;
  }
};

LookupScratch& lookup_scratch() {
  thread_local LookupScratch s;
  return s;
}

}  // namespace

void LookupCheck::judge_read(CommandPass& s) {
  const codec::CommandView& cmd = s.cmd;
  LookupScratch& sc = lookup_scratch();
  auto& joins = sc.joins;
  joins.clear();
  auto& view_joins = sc.view_joins;
  view_joins.clear();
  const bool aggregate = cmd.kind == CommandKind::kAggregate ||
                         (cmd.kind == CommandKind::kExplain && cmd.explained == "aggregate");
  if (aggregate && LookupWalker::may_contain_join(cmd.pipeline)) {
    LookupWalker::walk(cmd.pipeline, [&](const Join& j) { joins.push_back(j); });
  }
  if (have_views_.load(std::memory_order_relaxed)) {
    std::lock_guard lock(views_mutex_);
    auto it = views_.find(sc.ns_of(s.db, s.coll));
    if (it != views_.end()) view_joins = it->second;
  }
  const bool with_lookup = !joins.empty() || !view_joins.empty();
  if (s.dry_run) {
    // RuleSnapshot as if this read were already in the window (the real pass adds it afterwards).
    if (!with_lookup || s.limits->limit(RuleKind::kMaxLookupRatio).empty()) return;
    LookupWindow::Totals totals = s.stats->lookups.totals(s.now());
    ++totals.reads;
    ++totals.lookups;
    if (totals.reads < s.limits->lookup_min_reads) return;
    if (const Bound* b = s.limits->limit(RuleKind::kMaxLookupRatio).exceeded(totals.ratio())) {
      s.add(RuleKind::kMaxLookupRatio, *b, "", totals.ratio(), -1, nullptr);
    }
    return;
  }
  auto& labels = sc.labels;
  labels.clear();
  // A read without a join, most reads, takes no lock: the window's slots are atomic.
  s.stats->reads_total.fetch_add(1, std::memory_order_relaxed);
  s.stats->lookups.set_window(s.limits->lookup_window);
  s.stats->lookups.add(s.now(), with_lookup);
  LookupWindow::Totals totals;
  if (with_lookup) {
    {
      std::lock_guard lock(s.stats->mutex);
      ++s.stats->lookup_reads_total;
      for (const Join& j : joins) labels.push_back(&s.stats->count_from(j.from, kMaxLookupFroms));
      for (const auto& from : view_joins) {
        labels.push_back(&s.stats->count_from(from, kMaxLookupFroms));
      }
    }
    totals = s.stats->lookups.totals(s.now());
  }
  if (measurements_ != nullptr) {
    measurements_->on_read(s.stats->labels, with_lookup, s.app);
    for (const std::string* from : labels) {
      measurements_->on_lookup(s.stats->labels, *from);
    }
  }
  if (advice_ != nullptr) advice_->on_read(s.stats->db, s.stats->coll, with_lookup, s.app);
  if (with_lookup && !s.limits->limit(RuleKind::kMaxLookupRatio).empty() &&
      totals.reads >= s.limits->lookup_min_reads) {
    if (const Bound* b = s.limits->limit(RuleKind::kMaxLookupRatio).exceeded(totals.ratio())) {
      s.add(RuleKind::kMaxLookupRatio, *b, "", totals.ratio(), -1, nullptr);
    }
  }
}

void LookupCheck::learn_definition(const codec::CommandView& cmd, const RuleSet& rules) {
  if (cmd.kind != CommandKind::kCreate || cmd.pipeline.empty()) return;
  std::vector<std::string> froms;
  LookupWalker::walk(cmd.pipeline, [&](const Join& j) { froms.emplace_back(j.from); });
  std::string ns;
  write_namespace_key(ns, cmd.database, cmd.collection);
  std::lock_guard lock(views_mutex_);
  if (froms.empty()) {
    views_.erase(ns);
    return;
  }
  if (views_.size() < rules.tracking().max_namespaces || views_.count(ns) != 0) {
    views_[ns] = std::move(froms);
    have_views_.store(true, std::memory_order_relaxed);
  }
}

}  // namespace docguard::rules
