// Read checks: the $lookup window and views, and sampling of replies to learn document shapes.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine_internal.h"

namespace docguard::rules {

void Engine::inspect_read(CommandPass& s, const codec::CommandView& cmd) {
  Scratch& sc = scratch();
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
    if (!with_lookup || s.limits->lookup_ratio.empty()) return;
    LookupWindow::Totals totals;
    {
      std::lock_guard lock(s.stats->mutex);
      totals = s.stats->lookups.totals(now());
    }
    ++totals.reads;
    ++totals.lookups;
    if (totals.reads < s.limits->lookup_min_reads) return;
    if (const Bound* b = s.limits->lookup_ratio.exceeded(totals.ratio())) {
      s.add(RuleKind::kMaxLookupRatio, *b, "", totals.ratio(), -1, nullptr);
    }
    return;
  }
  auto& labels = sc.labels;
  labels.clear();
  LookupWindow::Totals totals;
  {
    std::lock_guard lock(s.stats->mutex);
    ++s.stats->reads_total;
    s.stats->lookups.set_window(s.limits->lookup_window);
    s.stats->lookups.add(now(), with_lookup);
    if (with_lookup) {
      ++s.stats->lookup_reads_total;
      for (const Join& j : joins)
        labels.emplace_back(&s.stats->count_from(j.from, kMaxLookupFroms), 0);
      for (const auto& from : view_joins) {
        labels.emplace_back(&s.stats->count_from(from, kMaxLookupFroms), 0);
      }
      totals = s.stats->lookups.totals(now());
    }
  }
  if (measurements_ != nullptr) {
    measurements_->on_read(s.stats->labels, with_lookup, s.app);
    for (const auto& [from, unused] : labels) {
      measurements_->on_lookup(s.stats->labels, *from);
    }
  }
  if (advice_ != nullptr) advice_->on_read(s.stats->db, s.stats->coll, with_lookup, s.app);
  if (with_lookup && !s.limits->lookup_ratio.empty() &&
      totals.reads >= s.limits->lookup_min_reads) {
    if (const Bound* b = s.limits->lookup_ratio.exceeded(totals.ratio())) {
      s.add(RuleKind::kMaxLookupRatio, *b, "", totals.ratio(), -1, nullptr);
    }
  }
}

void Engine::remember_view(const codec::CommandView& cmd, const RuleSet& rules) {
  if (cmd.pipeline.empty()) return;
  std::vector<std::string> froms;
  LookupWalker::walk(cmd.pipeline, [&](const Join& j) { froms.emplace_back(j.from); });
  std::string ns = std::string(cmd.database) + "." + std::string(cmd.collection);
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

bool Engine::wants_reply_sample(const codec::CommandView& cmd) {
  if (cmd.more_to_come) return false;
  if (cmd.kind != CommandKind::kFind && cmd.kind != CommandKind::kAggregate &&
      cmd.kind != CommandKind::kGetMore) {
    return false;
  }
  const double rate = snapshot_.load()->rules->tracking().read_sample_rate;
  if (rate <= 0) return false;
  if (rate >= 1) return true;
  // splitmix64 per thread: cheap and good enough for sampling.
  thread_local uint64_t state = reinterpret_cast<uintptr_t>(&state) ^ 0x9E3779B97F4A7C15ull;
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53 < rate;
}

void Engine::observe_reply(const codec::CommandView& request, const codec::OpMsg& reply) {
  if (!codec::well_framed(reply.body)) return;
  codec::BsonElements top(reply.body);
  if (!top.find("cursor") || !top.holds_document()) return;
  std::string_view db = request.database;
  std::string_view coll = request.collection;
  codec::BsonView batch;
  for (codec::BsonElements cursor(top.container()); cursor.next();) {
    if (cursor.key == "ns" && cursor.holds_utf8()) {
      const std::string_view ns = cursor.utf8();
      const size_t dot = ns.find('.');
      if (dot != std::string_view::npos) {
        db = ns.substr(0, dot);
        coll = ns.substr(dot + 1);
      }
    } else if ((cursor.key == "firstBatch" || cursor.key == "nextBatch") && cursor.holds_array()) {
      batch = cursor.container();
    }
  }
  if (batch.empty() || db.empty() || coll.empty()) return;
  const std::shared_ptr<const RuleSet> rules = snapshot_.load()->rules;
  CollectionStats* stats = stats_for(db, coll);
  auto limits = limits_for(stats, db, coll, *rules);
  const bool track = limits->tracks_arrays;
  Scratch& sc = scratch();
  const double now = track ? seconds_now() : -1;
  for (codec::BsonElements doc(batch); doc.next();) {
    if (!doc.holds_document()) continue;
    DocumentShape& shape = sc.shape;
    shape.measure(doc.container());
    record_shape(stats, measurements_, shape, "read_sample", true,
                 rules->tracking().max_field_paths);
    if (track && shape.has_id() && shape.array_count() > 0) {
      DocumentTracker::make_key(db, coll, shape.id_element(), &sc.key);
      for (const ArrayMeasure* a = shape.arrays_begin(); a != shape.arrays_end(); ++a) {
        tracker_.record(sc.key, a->path, a->length, true, now, shape.bytes());
      }
    }
  }
}

void Engine::learn_stored_document(std::string_view db, std::string_view coll,
                                   const codec::BsonView& document) {
  if (document.empty()) return;
  const std::shared_ptr<const RuleSet> rules = snapshot_.load()->rules;
  CollectionStats* stats = stats_for(db, coll);
  auto limits = limits_for(stats, db, coll, *rules);
  census_stored_document(*rules, false, db, coll, document);
  if (const auto& candidates = rules->candidates()) {
    census_stored_document(*candidates, true, db, coll, document);
  }
  // Only namespaces with array bounds use the tracker: remembering the documents of every
  // collection read would push the ones traffic needs out of its bounded memory.
  if (!limits->tracks_arrays) return;
  Scratch& sc = scratch();
  DocumentShape& shape = sc.shape;
  shape.measure(document);
  if (!shape.has_id() || shape.array_count() == 0) return;
  DocumentTracker::make_key(db, coll, shape.id_element(), &sc.key);
  const double now = seconds_now();
  for (const ArrayMeasure* a = shape.arrays_begin(); a != shape.arrays_end(); ++a) {
    tracker_.record(sc.key, a->path, a->length, true, now, shape.bytes());
  }
}

void Engine::observe_catalog_reply(const codec::CommandView& request, const codec::OpMsg& reply) {
  if (!codec::well_framed(reply.body)) return;
  codec::BsonElements ok(reply.body);
  if (!ok.find("ok") || ok.as_double() != 1.0) return;
  learn_from_catalog_reply(guardrail_.catalog(), request, reply.body);
  if (advice_ != nullptr) advice_->on_catalog_reply(request, reply.body);
}

}  // namespace docguard::rules
