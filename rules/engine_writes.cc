// Write checks: inserted documents, update and delete statements, and 8.0 bulkWrite ops.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "docguard/rules/query_guardrail.h"
#include "engine_internal.h"

namespace docguard::rules {

namespace engine_detail {

// Records a measured shape in the statistics and tells the measurement sink.
void record_shape(CollectionStats* stats, MeasurementSink* measurements, const DocumentShape& shape,
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
      auto& [label, field] = stats->field(a->path, max_fields);
      field.lengths.add(a->length);
      labels.emplace_back(&label, a->length);
    }
  }
  if (measurements == nullptr) return;
  if (whole_document) {
    measurements->on_document_size(stats->labels, source, shape.bytes());
  }
  for (const auto& [label, length] : labels) {
    measurements->on_array_length(stats->labels, *label, length);
  }
}

}  // namespace engine_detail

namespace {
// Stands for a stored ObjectId docguard cannot see (judging a replacement without _id).
constexpr uint8_t kPlaceholderObjectId[12] = {};
}  // namespace

void Engine::inspect_insert(CommandPass& s, const codec::BsonView& doc, int32_t index) {
  Scratch& sc = scratch();
  DocumentShape& shape = sc.shape;
  shape.measure(doc);
  s.check_shape(shape, true, index, shape.has_id() ? &shape.id_element() : nullptr);
  if (!s.limits->schemas.empty()) {
    if (shape.has_id()) {
      schema_.judge(s, doc, index, &shape.id_element(), SchemaCheck::Written::kInsert);
    } else {
      // Without an _id, the server gives the document a new ObjectId before validating it.
      bson_value_t id;
      id.value_type = BSON_TYPE_OID;
      bson_oid_init(&id.value.v_oid, nullptr);
      bson_t id_doc = BSON_INITIALIZER;
      bson_append_value(&id_doc, "_id", 3, &id);
      codec::BsonElements id_element(&id_doc);
      if (id_element.find("_id")) {
        schema_.judge_with_id(s, doc, false, id, index, &id_element, SchemaCheck::Written::kInsert);
      }
      bson_destroy(&id_doc);
    }
  }
  if (s.dry_run) return;
  record_shape(s.stats, measurements_, shape, "insert", true, s.rules.tracking().max_field_paths);
  if (shape.has_id() && shape.array_count() > 0 && s.tracks_arrays() && !s.blocked(index)) {
    DocumentTracker::make_key(s.db, s.coll, shape.id_element(), &sc.key);
    const double now = s.seconds_now();
    for (const ArrayMeasure* a = shape.arrays_begin(); a != shape.arrays_end(); ++a) {
      tracker_.record(sc.key, a->path, a->length, false, now, shape.bytes());
    }
  }
}

void Engine::inspect_delete(CommandPass& s, const codec::BsonView& q) {
  codec::BsonElements id(q);
  if (s.dry_run || !s.tracks_arrays() || !id_equality(q, &id)) return;
  Scratch& sc = scratch();
  DocumentTracker::make_key(s.db, s.coll, id, &sc.key);
  tracker_.forget(sc.key);
}

void Engine::inspect_update(CommandPass& s, const codec::BsonView& q, const codec::BsonView& u,
                            bool u_is_pipeline, bool upsert, int32_t index) {
  if (u.empty()) return;
  Scratch& sc = scratch();
  codec::BsonElements q_id(q);
  const bool has_q_id = id_equality(q, &q_id);
  const uint32_t max_fields = s.rules.tracking().max_field_paths;
  const bool track = s.tracks_arrays();

  if (!u_is_pipeline && !is_operator_document(u)) {
    // Replacement (also upserts and findAndModify replacements): the whole new document.
    DocumentShape& shape = sc.shape;
    shape.measure(u);
    const codec::BsonElements* id =
        has_q_id ? &q_id : (shape.has_id() ? &shape.id_element() : nullptr);
    s.check_shape(shape, true, index, id);
    if (!s.limits->schemas.empty()) {
      // A replacement keeps the stored _id: the query's when it names one, else an ObjectId
      // (the default _id) stands for it, and errInfo's failingDocumentId is then unknown.
      bson_value_t stored;
      stored.value_type = BSON_TYPE_OID;
      bson_oid_init_from_data(&stored.value.v_oid, kPlaceholderObjectId);
      bson_value_t given;
      if (has_q_id && q_id.borrow_value(&given)) {
        bson_value_destroy(&stored);
        bson_value_copy(&given, &stored);
      }
      schema_.judge_with_id(s, u, shape.has_id(), stored, index, id,
                            shape.has_id() || has_q_id
                                ? SchemaCheck::Written::kReplacement
                                : SchemaCheck::Written::kReplacementOfUnknownId);
      bson_value_destroy(&stored);
    }
    if (s.dry_run) return;
    record_shape(s.stats, measurements_, shape, "replace", true, max_fields);
    if (track && id != nullptr && !s.blocked(index)) {
      DocumentTracker::make_key(s.db, s.coll, *id, &sc.key);
      tracker_.forget(sc.key);  // a replacement starts every growth history again
      const double now = s.seconds_now();
      for (const ArrayMeasure* a = shape.arrays_begin(); a != shape.arrays_end(); ++a) {
        tracker_.record(sc.key, a->path, a->length, false, now, shape.bytes());
      }
    }
    return;
  }

  UpdateShape& update = sc.update;
  update.measure(u, u_is_pipeline);
  const codec::BsonElements* id = has_q_id ? &q_id : nullptr;
  if (!s.limits->schemas.empty()) {
    schema_.judge(
        s, u, index, id,
        upsert ? SchemaCheck::Written::kOperatorUpsert : SchemaCheck::Written::kOperatorUpdate);
  }
  if (track && id != nullptr) DocumentTracker::make_key(s.db, s.coll, *id, &sc.key);

  // Whole arrays and documents set by $set: their lengths are exact.
  const DocumentShape& set_values = update.set_values();
  s.check_shape(set_values, false, index, id);
  if (const Bound* b = s.limits->document_bytes.exceeded(update.set_bytes())) {
    // What $set writes is a lower bound on the resulting document (an upsert creates it).
    s.add(RuleKind::kMaxDocumentBytes, *b, "", update.set_bytes(), index, id);
  }
  if (set_values.array_count() > 0 && !s.dry_run) {
    record_shape(s.stats, measurements_, set_values, "update", false, max_fields);
    if (track && id != nullptr && !s.blocked(index)) {
      const double now = s.seconds_now();
      for (const ArrayMeasure* a = set_values.arrays_begin(); a != set_values.arrays_end(); ++a) {
        tracker_.record(sc.key, a->path, a->length, false, now);
      }
    }
  }

  const NamespaceLimits& l = *s.limits;
  // Each growth's path bound, looked up once for the checks below and for the tracked lengths.
  auto& by_paths = sc.growth_limits;
  by_paths.clear();
  for (size_t i = 0; i < update.growth_count(); ++i) {
    const ArrayGrowth& g = update.growth()[i];
    const std::string* label = nullptr;
    if (!s.dry_run) {
      std::lock_guard lock(s.stats->mutex);
      auto& [lbl, field] = s.stats->field(g.path, max_fields);
      ++field.pushes;
      field.pushed_elements += g.elements;
      label = &lbl;
    }
    if (label != nullptr) {
      if (measurements_ != nullptr) {
        measurements_->on_array_push(s.stats->labels, *label, g.elements);
      }
      if (advice_ != nullptr && !g.has_slice) {
        advice_->on_unbounded_push(s.stats->db, s.stats->coll, *label, g.elements, s.app);
      }
    }

    if (!g.has_slice && l.push_slice_action != Action::kOff) {
      Bound b{0, l.push_slice_action, l.push_slice_match, l.push_slice_line, l.push_slice_rule};
      s.add(RuleKind::kRequirePushSlice, b, g.path, g.elements, index, id);
    }
    // With $slice the array ends at most |N| long: a cap above the bound lets it pass the bound.
    const double grows_to = g.has_slice ? g.slice_cap : g.elements;
    if (const Bound* b = l.array_length_any.exceeded(grows_to)) {
      s.add(RuleKind::kMaxArrayLength, *b, g.path, grows_to, index, id);
    }
    const Limit* by_path = l.array_length_by_path.empty() ? nullptr : l.array_limit_for(g.path);
    by_paths.push_back(by_path);
    if (by_path != nullptr) {
      if (const Bound* b = by_path->exceeded(grows_to)) {
        s.add(RuleKind::kArrayLength, *b, g.path, grows_to, index, id);
      }
    }
  }
  if (!track || id == nullptr || s.blocked(index)) return;
  for (size_t i = 0; i < update.growth_count(); ++i) {
    const ArrayGrowth& g = update.growth()[i];
    const Limit* by_path = by_paths[i];
    auto cap = g.has_slice ? std::optional<uint32_t>(g.slice_cap) : std::nullopt;
    std::optional<DocumentTracker::Grown> grown;
    if (s.dry_run) {
      // A dry run reads what the push would make of the length and leaves it as it is.
      grown = tracker_.would_grow(sc.key, g.path, g.elements, cap);
    } else {
      // The push goes into the path's growth history for the forecast. The bounds are the
      // rules' smallest values (Limit::min, infinite without one), read without a call: pushes
      // onto documents the tracker does not know cost next to nothing.
      DocumentTracker::Push push;
      push.now = s.seconds_now();
      push.bytes = g.bytes;
      push.array_bound = by_path != nullptr ? std::min(l.array_length_any.min, by_path->min)
                                            : l.array_length_any.min;
      push.document_bound = l.document_bytes.min;
      push.horizon = forecast_horizon();
      grown = tracker_.grow(sc.key, g.path, g.elements, cap, &push);
      if (push.entered) log_entered_horizon(s, g.path, *push.entered, grown->length);
    }
    if (!grown) continue;
    const Bound* strict = l.array_length_any.strictest();
    if (by_path != nullptr) {
      const Bound* p = by_path->strictest();
      if (strict == nullptr || (p != nullptr && p->value < strict->value)) strict = p;
    }
    // A length added up from forwarded writes only is an estimate (pulls and writes that
    // bypass docguard are not seen): warn, never block. One read from the stored document
    // (a sampled read, docguard's introspection) is a fact, and the rule's action applies.
    // A push that alone passes the bound was reported above already.
    const double grows_to = g.has_slice ? g.slice_cap : g.elements;
    if (strict != nullptr && grown->length > strict->value && grows_to <= strict->value) {
      const Action action =
          grown->read_from_store ? strict->action : weaker(strict->action, Action::kWarn);
      s.add(RuleKind::kTrackedArrayLength, *strict, g.path, grown->length, index, id, action);
      // Refused: the push never happens, so the length goes back to what it was (no $slice
      // here: a capped push cannot pass the bound).
      if (action == Action::kBlock && !s.dry_run) {
        tracker_.undo_grow(sc.key, g.path, g.elements, g.bytes);
      }
    }
  }
}

void Engine::inspect_bulk_write(const codec::CommandView& cmd, const RequestContext& ctx,
                                const RuleSnapshot& snapshot, bool dry_run, Verdict& verdict) {
  // Per op: {insert: nsIdx, document} | {update: nsIdx, filter, updateMods, upsert, multi} |
  // {delete: nsIdx, filter}; the namespace is nsInfo[nsIdx].ns.
  const RuleSet& rules = dry_run ? *snapshot.candidates : *snapshot.rules;
  const uint32_t scope = scope_of(ctx, rules, dry_run);
  const std::string_view app =
      !dry_run && (measurements_ != nullptr || advice_ != nullptr)
          ? std::string_view(app_label(ctx.app_name, rules.tracking().max_apps))
          : std::string_view();
  for (size_t i = 0; i < cmd.statements.size(); ++i) {
    // An ordered bulkWrite stops at its first refused op: later ones never run.
    if (!dry_run && cmd.ordered && !verdict.blocked_statements.empty()) break;
    const codec::BsonView& op = cmd.statements[i];
    codec::BsonElements field(op);
    if (!codec::well_framed(op) || !field.next()) continue;
    const std::string_view verb = field.key;
    if (!field.holds_int()) continue;
    const int64_t ns_index = field.as_int64();
    if (ns_index < 0 || static_cast<size_t>(ns_index) >= cmd.ns_info.size()) continue;
    const std::string_view ns =
        codec::find_string(cmd.ns_info[static_cast<size_t>(ns_index)], "ns");
    const size_t dot = ns.find('.');
    if (dot == std::string_view::npos) continue;
    const std::string_view db = ns.substr(0, dot);
    const std::string_view coll = ns.substr(dot + 1);
    CollectionStats* stats = stats_for(db, coll);
    // Per op, like insert/update/delete batches: the proxy forwards the allowed ops and merges
    // the per-op results of the reply's cursor.
    CommandPass s{cmd,     ctx,   rules,
                  verdict, stats, limits_for(stats, db, coll, rules, scope, dry_run),
                  db,      coll,  &clock_};
    s.hits = dry_run ? snapshot.candidate_hits.get() : snapshot.hits.get();
    s.dry_run = dry_run;
    s.app = app;
    codec::BsonView document, filter, mods;
    bool mods_pipeline = false;
    bool upsert = false;
    while (field.next()) {
      const std::string_view k = field.key;
      if (k == "document") document = field.container();
      if (k == "filter") filter = field.container();
      if (k == "updateMods") {
        mods = field.container();
        mods_pipeline = field.holds_array();
      }
      if (k == "upsert") upsert = field.as_bool();
    }
    const auto index = static_cast<int32_t>(i);
    const size_t before = verdict.violations.size();
    if (verb == "insert") {
      inspect_insert(s, document, index);
    } else if (verb == "update") {
      inspect_update(s, filter, mods, mods_pipeline, upsert, index);
      guardrail_.judge_query(s, statement_parts(op), index);
    } else if (verb == "delete") {
      inspect_delete(s, filter);
      guardrail_.judge_query(s, statement_parts(op), index);
    }
    report(s, before);
  }
}

}  // namespace docguard::rules
