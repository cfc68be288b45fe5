#include "docguard/rules/engine.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "docguard/rules/document_shape.h"
#include "docguard/rules/lookup_walker.h"
#include "docguard/structured_log.h"

namespace docguard::rules {

using command::CommandKind;

namespace {

// Upper bounds on names kept per namespace besides field paths.
constexpr uint32_t kMaxOffenders = 16;
constexpr uint32_t kMaxLookupFroms = 32;

std::string_view key_of(const bson_iter_t* iter) {
  return {bson_iter_key(iter), bson_iter_key_len(iter)};
}

wire::BsonView sub_view(const bson_iter_t* iter) {
  uint32_t len = 0;
  const uint8_t* data = nullptr;
  if (BSON_ITER_HOLDS_DOCUMENT(iter)) {
    bson_iter_document(iter, &len, &data);
  } else if (BSON_ITER_HOLDS_ARRAY(iter)) {
    bson_iter_array(iter, &len, &data);
  }
  return data == nullptr ? wire::BsonView{} : wire::BsonView{data, len};
}

// Finds _id in a filter when it is an equality (a value, not {$in: ...}): the document the
// statement targets is then known.
bool id_equality(const wire::BsonView& q, bson_iter_t* id) {
  if (q.empty() || !bson_iter_init_from_data(id, q.data, q.size) || !bson_iter_find(id, "_id")) {
    return false;
  }
  if (BSON_ITER_HOLDS_DOCUMENT(id)) return !is_operator_document(sub_view(id));
  return true;
}

Action weaker(Action a, Action b) { return a < b ? a : b; }

// Thread-local measuring state: vectors keep their capacity, so steady-state inspection does
// not allocate unless something is violated.
struct Scratch {
  DocumentShape shape;
  UpdateShape update;
  std::string key;
  std::string ns;
  std::vector<std::pair<const std::string*, uint32_t>> labels;
  std::vector<Join> joins;
  std::vector<std::string> view_joins;
  struct LogDecision {
    bool log;
    uint64_t suppressed;
  };
  std::vector<LogDecision> log_decisions;
  std::vector<RuleKind> kinds;
  std::string ns_buffer;
  const std::string& ns_of(std::string_view db, std::string_view coll) {
    ns_buffer.assign(db).append(".").append(coll);
    return ns_buffer;
  }
};
Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  log::Fields::escape_into(out, s);
  out.push_back('"');
}

}  // namespace

struct Engine::Scope {
  const command::CommandView& cmd;
  const RequestContext& ctx;
  const RuleSet& rules;
  Verdict& verdict;
  CollectionStats* stats;
  std::shared_ptr<const NamespaceLimits> limits;
  std::string_view db;
  std::string_view coll;
  bool whole_command = false;  // a blocking violation refuses the whole command

  void add(RuleKind kind, const Bound& bound, std::string_view path, double measured, int32_t index,
           const bson_iter_t* id, Action action) {
    Violation v;
    v.rule = rule_name(kind);
    v.rule_match = bound.match;
    v.field_path = std::string(path);
    v.measured = measured;
    v.bound = bound.value;
    v.action = action;
    v.statement_index = index;
    if (id != nullptr) {
      bson_t b = BSON_INITIALIZER;
      if (bson_append_iter(&b, "_id", 3, id)) {
        const uint8_t* data = bson_get_data(&b);
        v.failing_id.assign(data, data + b.len);
      }
      bson_destroy(&b);
    }
    if (action == Action::kBlock) {
      if (whole_command || index < 0) {
        verdict.block_command = true;
      } else {
        verdict.blocked_statements.push_back(index);
      }
    }
    verdict.violations.push_back(std::move(v));
    scratch().kinds.push_back(kind);
  }
  void add(RuleKind kind, const Bound& bound, std::string_view path, double measured, int32_t index,
           const bson_iter_t* id) {
    add(kind, bound, path, measured, index, id, bound.action);
  }

  // Checks a measured shape. `whole_document` is false for values of $set, whose size says
  // nothing about the document's.
  void check_shape(const DocumentShape& shape, bool whole_document, int32_t index,
                   const bson_iter_t* id) {
    const NamespaceLimits& l = *limits;
    if (whole_document) {
      if (const Bound* b = l.document_bytes.exceeded(shape.bytes())) {
        add(RuleKind::kMaxDocumentBytes, *b, "", shape.bytes(), index, id);
      }
    }
    if (const Bound* b = l.nesting_depth.exceeded(shape.depth())) {
      add(RuleKind::kMaxNestingDepth, *b, "", shape.depth(), index, id);
    }
    if (l.array_length_any.empty() && l.array_length_by_path.empty()) return;
    for (const ArrayMeasure* a = shape.arrays_begin(); a != shape.arrays_end(); ++a) {
      if (const Bound* b = l.array_length_any.exceeded(a->length)) {
        add(RuleKind::kMaxArrayLength, *b, a->path, a->length, index, id);
      }
      if (!l.array_length_by_path.empty()) {
        if (const Limit* limit = l.array_limit_for(a->path)) {
          if (const Bound* b = limit->exceeded(a->length)) {
            add(RuleKind::kArrayLength, *b, a->path, a->length, index, id);
          }
        }
      }
    }
  }

  bool tracks_arrays() const {
    return !limits->array_length_any.empty() || !limits->array_length_by_path.empty();
  }

  // Whether statement `index` (-1: the command) is refused. The tracker learns only from
  // writes that reach the upstream, or it would count growth that never happened.
  bool blocked(int32_t index) const {
    if (verdict.block_command) return true;
    return index >= 0 && !verdict.blocked_statements.empty() &&
           verdict.blocked_statements.back() == index;
  }
  // An ordered batch stops at its first refused statement: later ones never run.
  bool batch_stopped() const { return cmd.ordered && !verdict.blocked_statements.empty(); }
};

Engine::Engine(std::shared_ptr<const RuleSet> rules, Observer* observer)
    : observer_(observer),
      overflow_(std::make_unique<CollectionStats>(std::string(kOverflowLabel),
                                                  std::string(kOverflowLabel))),
      tracker_(rules->tracking().max_tracked_documents,
               rules->tracking().max_tracked_fields_per_document) {
  rules_.store(std::move(rules));
}

Engine::~Engine() = default;

void Engine::reload(std::shared_ptr<const RuleSet> rules) {
  tracker_.set_limits(rules->tracking().max_tracked_documents,
                      rules->tracking().max_tracked_fields_per_document);
  rules_.store(std::move(rules));
}

void Engine::set_clock_for_testing(std::function<Clock::time_point()> clock) {
  clock_ = std::move(clock);
}

Engine::Clock::time_point Engine::now() const { return clock_ ? clock_() : Clock::now(); }

CollectionStats* Engine::stats_for(std::string_view db, std::string_view coll) {
  std::string& key = scratch().ns;
  key.assign(db).append(".").append(coll);
  {
    std::shared_lock lock(namespaces_mutex_);
    auto it = namespaces_.find(key);
    if (it != namespaces_.end()) return it->second.get();
  }
  std::unique_lock lock(namespaces_mutex_);
  auto it = namespaces_.find(key);
  if (it != namespaces_.end()) return it->second.get();
  // Reload may lower the bound: namespaces already known keep their statistics.
  if (namespaces_.size() >= rules_.load()->tracking().max_namespaces) return overflow_.get();
  auto stats = std::make_unique<CollectionStats>(std::string(db), std::string(coll));
  CollectionStats* raw = stats.get();
  namespaces_.emplace(key, std::move(stats));
  return raw;
}

std::shared_ptr<const NamespaceLimits> Engine::limits_for(CollectionStats* stats,
                                                          std::string_view db,
                                                          std::string_view coll,
                                                          const RuleSet& rules) {
  if (stats == overflow_.get()) {
    // The overflow bucket is shared by many namespaces: resolve each time (rare by design).
    return std::make_shared<const NamespaceLimits>(rules.resolve(db, coll));
  }
  std::lock_guard lock(stats->mutex);
  if (stats->limits == nullptr || stats->limits_generation != rules.generation()) {
    stats->limits = std::make_shared<const NamespaceLimits>(rules.resolve(db, coll));
    stats->limits_generation = rules.generation();
  }
  return stats->limits;
}

namespace {

// Records a measured shape in the statistics and tells the observer.
void record_shape(CollectionStats* stats, Observer* observer, const DocumentShape& shape,
                  const char* source, bool whole_document, uint32_t max_fields) {
  auto& labels = scratch().labels;
  labels.clear();
  {
    std::lock_guard lock(stats->mutex);
    if (whole_document) {
      if (std::strcmp(source, "read_sample") == 0) {
        stats->sampled_document_bytes.add(shape.bytes());
      } else {
        stats->document_bytes.add(shape.bytes());
      }
    }
    for (const ArrayMeasure* a = shape.arrays_begin(); a != shape.arrays_end(); ++a) {
      const std::string& label = stats->field_label(a->path, max_fields);
      stats->fields.find(label)->second.lengths.add(a->length);
      labels.emplace_back(&label, a->length);
    }
  }
  if (observer == nullptr) return;
  if (whole_document) observer->on_document_size(stats->db, stats->coll, source, shape.bytes());
  for (const auto& [label, length] : labels) {
    observer->on_array_length(stats->db, stats->coll, *label, length);
  }
}

}  // namespace

void Engine::inspect_insert(Scope& s, const wire::BsonView& doc, int32_t index) {
  Scratch& sc = scratch();
  DocumentShape& shape = sc.shape;
  shape.measure(doc);
  s.check_shape(shape, true, index, shape.has_id() ? &shape.id() : nullptr);
  record_shape(s.stats, observer_, shape, "insert", true, s.rules.tracking().max_field_paths);
  if (shape.has_id() && shape.array_count() > 0 && s.tracks_arrays() && !s.blocked(index)) {
    DocumentTracker::make_key(sc.ns_of(s.db, s.coll), shape.id(), &sc.key);
    for (const ArrayMeasure* a = shape.arrays_begin(); a != shape.arrays_end(); ++a) {
      tracker_.record(sc.key, a->path, a->length);
    }
  }
}

void Engine::inspect_delete(Scope& s, const wire::BsonView& q) {
  bson_iter_t id;
  if (!s.tracks_arrays() || !id_equality(q, &id)) return;
  Scratch& sc = scratch();
  DocumentTracker::make_key(sc.ns_of(s.db, s.coll), id, &sc.key);
  tracker_.forget(sc.key);
}

void Engine::inspect_update(Scope& s, const wire::BsonView& q, const wire::BsonView& u,
                            bool u_is_pipeline, int32_t index) {
  if (u.empty()) return;
  Scratch& sc = scratch();
  bson_iter_t q_id;
  const bool has_q_id = id_equality(q, &q_id);
  const uint32_t max_fields = s.rules.tracking().max_field_paths;
  const bool track = s.tracks_arrays();

  if (!u_is_pipeline && !is_operator_document(u)) {
    // Replacement (also upserts and findAndModify replacements): the whole new document.
    DocumentShape& shape = sc.shape;
    shape.measure(u);
    const bson_iter_t* id = has_q_id ? &q_id : (shape.has_id() ? &shape.id() : nullptr);
    s.check_shape(shape, true, index, id);
    record_shape(s.stats, observer_, shape, "replace", true, max_fields);
    if (track && id != nullptr && !s.blocked(index)) {
      DocumentTracker::make_key(sc.ns_of(s.db, s.coll), *id, &sc.key);
      tracker_.forget(sc.key);
      for (const ArrayMeasure* a = shape.arrays_begin(); a != shape.arrays_end(); ++a) {
        tracker_.record(sc.key, a->path, a->length);
      }
    }
    return;
  }

  UpdateShape& update = sc.update;
  update.measure(u, u_is_pipeline);
  const bson_iter_t* id = has_q_id ? &q_id : nullptr;
  if (track && id != nullptr) DocumentTracker::make_key(sc.ns_of(s.db, s.coll), *id, &sc.key);

  // Whole arrays and documents set by $set: their lengths are exact.
  const DocumentShape& set_values = update.set_values();
  s.check_shape(set_values, false, index, id);
  if (const Bound* b = s.limits->document_bytes.exceeded(update.set_bytes())) {
    // What $set writes is a lower bound on the resulting document (an upsert creates it).
    s.add(RuleKind::kMaxDocumentBytes, *b, "", update.set_bytes(), index, id);
  }
  if (set_values.array_count() > 0) {
    record_shape(s.stats, observer_, set_values, "update", false, max_fields);
    if (track && id != nullptr && !s.blocked(index)) {
      for (const ArrayMeasure* a = set_values.arrays_begin(); a != set_values.arrays_end(); ++a) {
        tracker_.record(sc.key, a->path, a->length);
      }
    }
  }

  const NamespaceLimits& l = *s.limits;
  for (size_t i = 0; i < update.growth_count(); ++i) {
    const ArrayGrowth& g = update.growth()[i];
    const std::string* label = nullptr;
    {
      std::lock_guard lock(s.stats->mutex);
      const std::string& lbl = s.stats->field_label(g.path, max_fields);
      auto& field = s.stats->fields.find(lbl)->second;
      ++field.pushes;
      field.pushed_elements += g.elements;
      label = &lbl;
    }
    if (observer_ != nullptr)
      observer_->on_array_push(s.stats->db, s.stats->coll, *label, g.elements);

    if (!g.has_slice && l.push_slice_action != Action::kOff) {
      Bound b{0, l.push_slice_action, l.push_slice_match};
      s.add(RuleKind::kRequirePushSlice, b, g.path, g.elements, index, id);
    }
    // With $slice the array ends at most |N| long: a cap above the bound lets it pass the bound.
    const double grows_to = g.has_slice ? g.slice_cap : g.elements;
    if (const Bound* b = l.array_length_any.exceeded(grows_to)) {
      s.add(RuleKind::kMaxArrayLength, *b, g.path, grows_to, index, id);
    }
    const Limit* by_path = l.array_length_by_path.empty() ? nullptr : l.array_limit_for(g.path);
    if (by_path != nullptr) {
      if (const Bound* b = by_path->exceeded(grows_to)) {
        s.add(RuleKind::kArrayLength, *b, g.path, grows_to, index, id);
      }
    }
  }
  if (!track || id == nullptr || s.blocked(index)) return;
  for (size_t i = 0; i < update.growth_count(); ++i) {
    const ArrayGrowth& g = update.growth()[i];
    const Limit* by_path = l.array_length_by_path.empty() ? nullptr : l.array_limit_for(g.path);
    {
      auto cap = g.has_slice ? std::optional<uint32_t>(g.slice_cap) : std::nullopt;
      if (auto length = tracker_.grow(sc.key, g.path, g.elements, cap)) {
        const Bound* strict = l.array_length_any.strictest();
        if (by_path != nullptr) {
          const Bound* p = by_path->strictest();
          if (strict == nullptr || (p != nullptr && p->value < strict->value)) strict = p;
        }
        // The tracker can be stale (writes that bypass docguard): warn, never block. A push
        // that alone passes the bound was reported above already.
        const double grows_to = g.has_slice ? g.slice_cap : g.elements;
        if (strict != nullptr && *length > strict->value && grows_to <= strict->value) {
          s.add(RuleKind::kTrackedArrayLength, *strict, g.path, *length, index, id,
                weaker(strict->action, Action::kWarn));
        }
      }
    }
  }
}

void Engine::inspect_read(Scope& s, const command::CommandView& cmd) {
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
  if (observer_ != nullptr) {
    observer_->on_read(s.stats->db, s.stats->coll, with_lookup);
    for (const auto& [from, unused] : labels) {
      observer_->on_lookup(s.stats->db, s.stats->coll, *from);
    }
  }
  if (with_lookup && !s.limits->lookup_ratio.empty() &&
      totals.reads >= s.limits->lookup_min_reads) {
    if (const Bound* b = s.limits->lookup_ratio.exceeded(totals.ratio())) {
      s.add(RuleKind::kMaxLookupRatio, *b, "", totals.ratio(), -1, nullptr);
    }
  }
}

void Engine::remember_view(const command::CommandView& cmd, const RuleSet& rules) {
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

void Engine::inspect_bulk_write(const command::CommandView& cmd, const RequestContext& ctx,
                                const RuleSet& rules, Verdict& verdict) {
  // Per op: {insert: nsIdx, document} | {update: nsIdx, filter, updateMods, upsert, multi} |
  // {delete: nsIdx, filter}; the namespace is nsInfo[nsIdx].ns.
  for (size_t i = 0; i < cmd.statements.size(); ++i) {
    // An ordered bulkWrite stops at its first refused op: later ones never run.
    if (cmd.ordered && !verdict.blocked_statements.empty()) break;
    const wire::BsonView& op = cmd.statements[i];
    bson_iter_t iter;
    if (op.empty() || !bson_iter_init_from_data(&iter, op.data, op.size) ||
        !bson_iter_next(&iter)) {
      continue;
    }
    const std::string_view verb = key_of(&iter);
    if (!BSON_ITER_HOLDS_INT(&iter)) continue;
    const int64_t ns_index = bson_iter_as_int64(&iter);
    if (ns_index < 0 || static_cast<size_t>(ns_index) >= cmd.ns_info.size()) continue;
    const std::string_view ns = wire::find_string(cmd.ns_info[static_cast<size_t>(ns_index)], "ns");
    const size_t dot = ns.find('.');
    if (dot == std::string_view::npos) continue;
    const std::string_view db = ns.substr(0, dot);
    const std::string_view coll = ns.substr(dot + 1);
    CollectionStats* stats = stats_for(db, coll);
    // Per op, like insert/update/delete batches: the proxy forwards the allowed ops and merges
    // the per-op results of the reply's cursor.
    Scope s{cmd, ctx, rules, verdict, stats, limits_for(stats, db, coll, rules), db, coll, false};
    wire::BsonView document, filter, mods;
    bool mods_pipeline = false;
    while (bson_iter_next(&iter)) {
      const std::string_view k = key_of(&iter);
      if (k == "document") document = sub_view(&iter);
      if (k == "filter") filter = sub_view(&iter);
      if (k == "updateMods") {
        mods = sub_view(&iter);
        mods_pipeline = BSON_ITER_HOLDS_ARRAY(&iter);
      }
    }
    const auto index = static_cast<int32_t>(i);
    const size_t before = verdict.violations.size();
    if (verb == "insert") {
      inspect_insert(s, document, index);
    } else if (verb == "update") {
      inspect_update(s, filter, mods, mods_pipeline, index);
    } else if (verb == "delete") {
      inspect_delete(s, filter);
    }
    report(s, before);
  }
}

Verdict Engine::inspect(const command::CommandView& cmd, const RequestContext& ctx) {
  Verdict verdict;
  scratch().kinds.clear();
  const std::shared_ptr<const RuleSet> rules = rules_.load();
  if (cmd.kind == CommandKind::kBulkWrite) {
    inspect_bulk_write(cmd, ctx, *rules, verdict);
  } else {
    if (cmd.collection.empty() || cmd.database.empty() || cmd.kind == CommandKind::kHello) {
      return verdict;
    }
    CollectionStats* stats = stats_for(cmd.database, cmd.collection);
    {
      std::lock_guard lock(stats->mutex);
      ++stats->commands;
    }
    if (observer_ != nullptr) observer_->on_command(stats->db, stats->coll, cmd.name);
    switch (cmd.kind) {
      case CommandKind::kInsert:
      case CommandKind::kUpdate:
      case CommandKind::kDelete:
      case CommandKind::kFindAndModify:
      case CommandKind::kFind:
      case CommandKind::kAggregate:
      case CommandKind::kCount:
      case CommandKind::kDistinct:
      case CommandKind::kExplain:
        break;
      case CommandKind::kCreate:
        remember_view(cmd, *rules);
        return verdict;
      default:
        return verdict;
    }
    Scope s{cmd,          ctx,           *rules,
            verdict,      stats,         limits_for(stats, cmd.database, cmd.collection, *rules),
            cmd.database, cmd.collection};
    switch (cmd.kind) {
      case CommandKind::kInsert:
        for (size_t i = 0; i < cmd.statements.size() && !s.batch_stopped(); ++i) {
          inspect_insert(s, cmd.statements[i], static_cast<int32_t>(i));
        }
        break;
      case CommandKind::kUpdate:
        for (size_t i = 0; i < cmd.statements.size() && !s.batch_stopped(); ++i) {
          bson_iter_t iter;
          const wire::BsonView& stmt = cmd.statements[i];
          if (stmt.empty() || !bson_iter_init_from_data(&iter, stmt.data, stmt.size)) continue;
          wire::BsonView q, u;
          bool pipeline = false;
          while (bson_iter_next(&iter)) {
            const std::string_view k = key_of(&iter);
            if (k == "q") q = sub_view(&iter);
            if (k == "u") {
              u = sub_view(&iter);
              pipeline = BSON_ITER_HOLDS_ARRAY(&iter);
            }
          }
          inspect_update(s, q, u, pipeline, static_cast<int32_t>(i));
        }
        break;
      case CommandKind::kDelete:
        for (const auto& stmt : cmd.statements) {
          bson_iter_t iter;
          if (!stmt.empty() && bson_iter_init_from_data(&iter, stmt.data, stmt.size) &&
              bson_iter_find(&iter, "q")) {
            inspect_delete(s, sub_view(&iter));
          }
        }
        break;
      case CommandKind::kFindAndModify:
        s.whole_command = true;
        if (cmd.remove) {
          inspect_delete(s, cmd.query);
        } else {
          inspect_update(s, cmd.query, cmd.update, cmd.update_is_pipeline, -1);
        }
        break;
      case CommandKind::kExplain:
        if (cmd.explained != "aggregate" && cmd.explained != "find" && cmd.explained != "count" &&
            cmd.explained != "distinct") {
          break;
        }
        [[fallthrough]];
      default:
        inspect_read(s, cmd);
        break;
    }
    report(s, 0);
  }
  auto& blocked = verdict.blocked_statements;
  std::sort(blocked.begin(), blocked.end());
  blocked.erase(std::unique(blocked.begin(), blocked.end()), blocked.end());
  return verdict;
}

void Engine::report(Scope& s, size_t first) {
  auto& violations = s.verdict.violations;
  if (violations.size() <= first) return;
  Scratch& sc = scratch();
  auto& decisions = sc.log_decisions;
  decisions.clear();
  const auto t = now();
  {
    std::lock_guard lock(s.stats->mutex);
    for (size_t i = first; i < violations.size(); ++i) {
      const auto kind = static_cast<size_t>(sc.kinds[i]);
      ++s.stats->violations[kind][static_cast<size_t>(violations[i].action)];
      s.stats->count_offender(s.ctx.app_name, kMaxOffenders);
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
  for (size_t i = first; i < violations.size(); ++i) {
    const Violation& v = violations[i];
    if (observer_ != nullptr) observer_->on_violation(s.stats->db, s.stats->coll, v.rule, v.action);
    const auto& d = decisions[i - first];
    if (!d.log) continue;
    // Names and numbers only: document values never reach the log.
    log::Fields fields;
    fields.add("rule", v.rule)
        .add("action", action_name(v.action))
        .add("ns", fmt::format("{}.{}", s.db, s.coll))
        .add("field", v.field_path)
        .add("measured", v.measured)
        .add("bound", v.bound)
        .add("match", v.rule_match)
        .add("command", s.cmd.name)
        .add("statement", static_cast<int64_t>(v.statement_index))
        .add("app", s.ctx.app_name)
        .add("peer", s.ctx.peer)
        .add("suppressed_since_last", static_cast<int64_t>(d.suppressed));
    spdlog::warn("{}", fields.message("docguard design rule violated"));
  }
}

bool Engine::wants_reply_sample(const command::CommandView& cmd) {
  if (cmd.more_to_come) return false;
  if (cmd.kind != CommandKind::kFind && cmd.kind != CommandKind::kAggregate &&
      cmd.kind != CommandKind::kGetMore) {
    return false;
  }
  const double rate = rules_.load()->tracking().read_sample_rate;
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

void Engine::observe_reply(const command::CommandView& request, const wire::OpMsg& reply) {
  bson_iter_t iter;
  if (reply.body.empty() || !bson_iter_init_from_data(&iter, reply.body.data, reply.body.size) ||
      !bson_iter_find(&iter, "cursor") || !BSON_ITER_HOLDS_DOCUMENT(&iter)) {
    return;
  }
  bson_iter_t cursor;
  if (!bson_iter_recurse(&iter, &cursor)) return;
  std::string_view db = request.database;
  std::string_view coll = request.collection;
  wire::BsonView batch;
  while (bson_iter_next(&cursor)) {
    const std::string_view k = key_of(&cursor);
    if (k == "ns" && BSON_ITER_HOLDS_UTF8(&cursor)) {
      uint32_t len = 0;
      const char* s = bson_iter_utf8(&cursor, &len);
      std::string_view ns(s, len);
      const size_t dot = ns.find('.');
      if (dot != std::string_view::npos) {
        db = ns.substr(0, dot);
        coll = ns.substr(dot + 1);
      }
    } else if ((k == "firstBatch" || k == "nextBatch") && BSON_ITER_HOLDS_ARRAY(&cursor)) {
      batch = sub_view(&cursor);
    }
  }
  if (batch.empty() || db.empty() || coll.empty()) return;
  const std::shared_ptr<const RuleSet> rules = rules_.load();
  CollectionStats* stats = stats_for(db, coll);
  auto limits = limits_for(stats, db, coll, *rules);
  const bool track = !limits->array_length_any.empty() || !limits->array_length_by_path.empty();
  Scratch& sc = scratch();
  std::string ns = std::string(db) + "." + std::string(coll);
  bson_iter_t doc;
  if (!bson_iter_init_from_data(&doc, batch.data, batch.size)) return;
  while (bson_iter_next(&doc)) {
    if (!BSON_ITER_HOLDS_DOCUMENT(&doc)) continue;
    DocumentShape& shape = sc.shape;
    shape.measure(sub_view(&doc));
    record_shape(stats, observer_, shape, "read_sample", true, rules->tracking().max_field_paths);
    if (track && shape.has_id() && shape.array_count() > 0) {
      DocumentTracker::make_key(ns, shape.id(), &sc.key);
      for (const ArrayMeasure* a = shape.arrays_begin(); a != shape.arrays_end(); ++a) {
        tracker_.record(sc.key, a->path, a->length);
      }
    }
  }
}

std::vector<Engine::ArrayFieldState> Engine::array_fields() const {
  std::vector<CollectionStats*> all;
  {
    std::shared_lock lock(namespaces_mutex_);
    for (const auto& [name, stats] : namespaces_) all.push_back(stats.get());
  }
  all.push_back(overflow_.get());
  std::vector<ArrayFieldState> out;
  for (CollectionStats* stats : all) {
    std::lock_guard lock(stats->mutex);
    for (const auto& [field, fs] : stats->fields) {
      ArrayFieldState state{stats->db, stats->coll, field, fs.lengths.max(), 0};
      if (stats->limits != nullptr) {
        const Limit* limit = stats->limits->array_limit_for(field);
        if (limit == nullptr || limit->empty()) limit = &stats->limits->array_length_any;
        if (!limit->empty()) state.bound = limit->min;
      }
      out.push_back(std::move(state));
    }
  }
  return out;
}

std::string Engine::status_json() const {
  const auto t = now();
  std::vector<const CollectionStats*> all;
  {
    std::shared_lock lock(namespaces_mutex_);
    for (const auto& [name, stats] : namespaces_) all.push_back(stats.get());
  }
  all.push_back(overflow_.get());
  std::sort(all.begin(), all.end(), [](const CollectionStats* a, const CollectionStats* b) {
    return std::tie(a->db, a->coll) < std::tie(b->db, b->coll);
  });
  const auto rules = rules_.load();
  std::string out;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "{{\"mode\":\"{}\",\"rules\":{},\"tracked_documents\":{},\"collections\":[",
                 action_name(rules->mode()), rules->rules().size(), tracker_.size());
  bool first_ns = true;
  for (const CollectionStats* cs : all) {
    auto* stats = const_cast<CollectionStats*>(cs);
    std::lock_guard lock(stats->mutex);
    if (stats == overflow_.get() && stats->commands == 0 && stats->document_bytes.count() == 0 &&
        stats->sampled_document_bytes.count() == 0) {
      continue;
    }
    if (!first_ns) out.push_back(',');
    first_ns = false;
    out += "{\"namespace\":";
    append_json_string(out, stats->db + "." + stats->coll);
    auto histogram = [&](const char* name, const Histogram& h) {
      fmt::format_to(o, ",\"{}\":{{\"count\":{},\"p50\":{},\"p99\":{},\"max\":{}}}", name,
                     h.count(), h.quantile(0.5), h.quantile(0.99), h.max());
    };
    fmt::format_to(o, ",\"commands\":{}", stats->commands);
    histogram("document_bytes", stats->document_bytes);
    histogram("sampled_document_bytes", stats->sampled_document_bytes);
    out += ",\"arrays\":{";
    bool first = true;
    for (const auto& [path, field] : stats->fields) {
      if (!first) out.push_back(',');
      first = false;
      append_json_string(out, path);
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
      append_json_string(out, from);
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
    out += "},\"top_offenders\":[";
    std::vector<std::pair<uint64_t, const std::string*>> apps;
    for (const auto& [app, n] : stats->offenders) apps.emplace_back(n, &app);
    std::sort(apps.begin(), apps.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : *a.second < *b.second;
    });
    for (size_t i = 0; i < apps.size() && i < 5; ++i) {
      if (i > 0) out.push_back(',');
      out += "{\"app\":";
      append_json_string(out, *apps[i].second);
      fmt::format_to(o, ",\"violations\":{}}}", apps[i].first);
    }
    out += "]}";
  }
  out += "]}";
  return out;
}

}  // namespace docguard::rules
