// The shape check: written documents and updates measured against the namespace's bounds, their
// shapes recorded, their arrays tracked, and the forecast's log line for a document about to
// reach a limit.
#include "docguard/rules/shape_check.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <optional>
#include <string>
#include <utility>

namespace docguard::rules {

namespace {

// The check's thread-local state: vectors keep their capacity, so steady-state inspection does
// not allocate unless something is violated.
struct ShapeScratch {
  DocumentShape shape;
  UpdateShape update;
  std::string key;  // the tracker's key of the document in judgement
  std::vector<std::pair<const std::string*, uint32_t>> labels;
  // Each push's path bound, looked up by judge_write for learn_write of the same statement.
  std::vector<const Limit*> growth_limits;
};

ShapeScratch& shape_scratch() {
  thread_local ShapeScratch s;
  return s;
}

}  // namespace

ShapeCheck::ShapeCheck(MeasurementSink* measurements, AdviceSink* advice,
                       const TrackingLimits& tracking)
    : measurements_(measurements),
      advice_(advice),
      tracker_(tracking.max_tracked_documents, tracking.max_tracked_fields_per_document) {}

void ShapeCheck::set_tracking(const TrackingLimits& tracking) {
  tracker_.set_limits(tracking.max_tracked_documents, tracking.max_tracked_fields_per_document);
}

const DocumentShape& ShapeCheck::measure(const codec::BsonView& doc) {
  DocumentShape& shape = shape_scratch().shape;
  shape.measure(doc);
  return shape;
}

const DocumentShape& ShapeCheck::measure(const codec::BsonView& doc,
                                         const codec::DocumentOutline& outline) {
  DocumentShape& shape = shape_scratch().shape;
  shape.measure(doc, outline);
  return shape;
}

const UpdateShape& ShapeCheck::measure_update(const codec::BsonView& u, bool pipeline) {
  UpdateShape& update = shape_scratch().update;
  update.measure(u, pipeline);
  return update;
}

void ShapeCheck::judge(CommandPass& s, const DocumentShape& shape, bool whole_document,
                       int32_t index, const codec::BsonElements* id) {
  const NamespaceLimits& l = *s.limits;
  if (whole_document) {
    if (const Bound* b = l.limit(RuleKind::kMaxDocumentBytes).exceeded(shape.bytes())) {
      s.add(RuleKind::kMaxDocumentBytes, *b, "", shape.bytes(), index, id);
    }
  }
  if (const Bound* b = l.limit(RuleKind::kMaxNestingDepth).exceeded(shape.depth())) {
    s.add(RuleKind::kMaxNestingDepth, *b, "", shape.depth(), index, id);
  }
  if (l.limit(RuleKind::kMaxArrayLength).empty() && l.array_length_by_path.empty()) return;
  for (const ArrayMeasure* a = shape.arrays_begin(); a != shape.arrays_end(); ++a) {
    if (const Bound* b = l.limit(RuleKind::kMaxArrayLength).exceeded(a->length)) {
      s.add(RuleKind::kMaxArrayLength, *b, a->path, a->length, index, id);
    }
    if (!l.array_length_by_path.empty()) {
      if (const Limit* limit = l.array_limit_for(a->path)) {
        if (const Bound* b = limit->exceeded(a->length)) {
          s.add(RuleKind::kArrayLength, *b, a->path, a->length, index, id);
        }
      }
    }
  }
}

void ShapeCheck::record(CollectionStats* stats, const DocumentShape& shape, std::string_view source,
                        bool whole_document, uint32_t max_fields) {
  auto& labels = shape_scratch().labels;
  labels.clear();
  {
    std::lock_guard lock(stats->mutex);
    if (whole_document) {
      if (source == "read_sample") {
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
  if (measurements_ == nullptr) return;
  if (whole_document) {
    measurements_->on_document_size(stats->labels, source, shape.bytes());
  }
  for (const auto& [label, length] : labels) {
    measurements_->on_array_length(stats->labels, *label, length);
  }
}

void ShapeCheck::learn_insert(CommandPass& s, const DocumentShape& shape, int32_t index) {
  if (s.dry_run) return;
  record(s.stats, shape, "insert", true, s.rules.tracking().max_field_paths);
  if (shape.has_id() && shape.array_count() > 0 && s.tracks_arrays() && !s.blocked(index)) {
    track(s.db, s.coll, shape.id_element(), shape, false, false, s.seconds_now());
  }
}

void ShapeCheck::learn_replacement(CommandPass& s, const DocumentShape& shape,
                                   const codec::BsonElements* id, int32_t index) {
  if (s.dry_run) return;
  record(s.stats, shape, "replace", true, s.rules.tracking().max_field_paths);
  if (s.tracks_arrays() && id != nullptr && !s.blocked(index)) {
    // A replacement starts every growth history again.
    track(s.db, s.coll, *id, shape, true, false, s.seconds_now());
  }
}

void ShapeCheck::forget(CommandPass& s, const codec::BsonElements* id) {
  if (s.dry_run || !s.tracks_arrays() || id == nullptr) return;
  std::string& key = shape_scratch().key;
  DocumentTracker::make_key(s.db, s.coll, *id, &key);
  tracker_.forget(key);
}

void ShapeCheck::learn_read(const ReadDocument& read) {
  const uint32_t max_fields = read.rules->tracking().max_field_paths;
  if (read.from_store) {
    // Only namespaces with array bounds use the tracker: remembering the documents of every
    // collection read would push the ones traffic needs out of its bounded memory.
    if (read.track_arrays) {
      remember_read(read.db, read.coll, read.stats, read.document, false, true, read.now,
                    max_fields);
    }
    return;
  }
  remember_read(read.db, read.coll, read.stats, read.document, true, read.track_arrays, read.now,
                max_fields);
}

void ShapeCheck::remember_read(std::string_view db, std::string_view coll, CollectionStats* stats,
                               const codec::BsonView& document, bool record_shape,
                               bool track_arrays, double now, uint32_t max_fields) {
  const DocumentShape& shape = measure(document);
  if (record_shape) record(stats, shape, "read_sample", true, max_fields);
  if (!track_arrays || !shape.has_id() || shape.array_count() == 0) return;
  track(db, coll, shape.id_element(), shape, false, true, now);
}

void ShapeCheck::track(std::string_view db, std::string_view coll, const codec::BsonElements& id,
                       const DocumentShape& shape, bool replaced, bool from_store, double now) {
  std::string& key = shape_scratch().key;
  DocumentTracker::make_key(db, coll, id, &key);
  if (replaced) tracker_.forget(key);
  for (const ArrayMeasure* a = shape.arrays_begin(); a != shape.arrays_end(); ++a) {
    tracker_.record(key, a->path, a->length, from_store, now, shape.bytes());
  }
}

std::vector<PathForecast> ShapeCheck::forecasts(double now) const {
  return summarize_forecasts(tracker_.growing_arrays(now));
}

void ShapeCheck::log_entered_horizon(const CommandPass& s, std::string_view field,
                                     const DocumentTracker::EnteredHorizon& entered,
                                     uint32_t length) {
  // Many documents of one collection may enter at once (a deploy that pushes more): one line a
  // second at most; the next line counts the ones left out.
  constexpr int64_t kIntervalMs = 1000;
  const int64_t now_ms = wall_ms();
  int64_t last = horizon_logged_ms_.load(std::memory_order_relaxed);
  if (now_ms - last < kIntervalMs ||
      !horizon_logged_ms_.compare_exchange_strong(last, now_ms, std::memory_order_relaxed)) {
    horizon_suppressed_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // Names and numbers only: document values (the _id included) never reach the log; /report
  // names the document.
  log::Fields fields;
  fields.add("ns", fmt::format("{}.{}", s.db, s.coll))
      .add("field", field)
      .add("limit", limit_name(entered.limit))
      .add("bound", entered.bound)
      .add("eta_seconds", std::round(entered.eta_seconds))
      .add("elements_per_second", entered.rate)
      .add("length", static_cast<double>(length))
      .add("horizon_seconds", forecast_horizon())
      .add("app", s.ctx.app_name)
      .add("suppressed_since_last",
           static_cast<int64_t>(horizon_suppressed_.exchange(0, std::memory_order_relaxed)));
  spdlog::warn("{}", fields.message("docguard array approaching its limit"));
}

void ShapeCheck::judge_update(CommandPass& s, const UpdateShape& update,
                              const codec::BsonElements* id, int32_t index) {
  const uint32_t max_fields = s.rules.tracking().max_field_paths;
  // Whole arrays and documents set by $set: their lengths are exact.
  const DocumentShape& set_values = update.set_values();
  judge(s, set_values, false, index, id);
  if (const Bound* b = s.limits->limit(RuleKind::kMaxDocumentBytes).exceeded(update.set_bytes())) {
    // What $set writes is a lower bound on the resulting document (an upsert creates it).
    s.add(RuleKind::kMaxDocumentBytes, *b, "", update.set_bytes(), index, id);
  }
  // What the client sends is recorded whatever the verdict (as an insert's shape is).
  if (set_values.array_count() > 0 && !s.dry_run) {
    record(s.stats, set_values, "update", false, max_fields);
  }
  const NamespaceLimits& l = *s.limits;
  // Each growth's path bound, looked up once for the checks below and for the tracked lengths
  // (track_update).
  auto& by_paths = shape_scratch().growth_limits;
  by_paths.clear();
  for (size_t i = 0; i < update.growth_count(); ++i) {
    const ArrayGrowth& g = update.growth()[i];
    if (!s.dry_run) {
      const std::string* label = nullptr;
      {
        std::lock_guard lock(s.stats->mutex);
        auto& [lbl, field] = s.stats->field(g.path, max_fields);
        ++field.pushes;
        field.pushed_elements += g.elements;
        label = &lbl;
      }
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
    if (const Bound* b = l.limit(RuleKind::kMaxArrayLength).exceeded(grows_to)) {
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
}

void ShapeCheck::track_update(CommandPass& s, const UpdateShape& update,
                              const codec::BsonElements& id, int32_t index) {
  ShapeScratch& sc = shape_scratch();
  DocumentTracker::make_key(s.db, s.coll, id, &sc.key);
  const DocumentShape& set_values = update.set_values();
  if (set_values.array_count() > 0 && !s.dry_run) {
    const double now = s.seconds_now();
    for (const ArrayMeasure* a = set_values.arrays_begin(); a != set_values.arrays_end(); ++a) {
      tracker_.record(sc.key, a->path, a->length, false, now);
    }
  }
  const NamespaceLimits& l = *s.limits;
  const auto& by_paths = sc.growth_limits;
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
      push.array_bound = by_path != nullptr
                             ? std::min(l.limit(RuleKind::kMaxArrayLength).min, by_path->min)
                             : l.limit(RuleKind::kMaxArrayLength).min;
      push.document_bound = l.limit(RuleKind::kMaxDocumentBytes).min;
      push.horizon = forecast_horizon();
      grown = tracker_.grow(sc.key, g.path, g.elements, cap, &push);
      if (push.entered) log_entered_horizon(s, g.path, *push.entered, grown->length);
    }
    const Bound* strict = l.limit(RuleKind::kMaxArrayLength).strictest();
    if (by_path != nullptr) {
      const Bound* p = by_path->strictest();
      if (strict == nullptr || (p != nullptr && p->value < strict->value)) strict = p;
    }
    if (!grown) {
      if (strict != nullptr) length_unknown(s);
      continue;
    }
    // A length added up from forwarded writes only is an estimate (pulls and writes that
    // bypass docguard are not seen): warn, never block. One read from the stored document
    // (a sampled read, docguard's introspection) is a fact, and the rule's action applies.
    // A push that alone passes the bound was reported above already.
    const double grows_to = g.has_slice ? g.slice_cap : g.elements;
    if (strict != nullptr && grown->length > strict->value && grows_to <= strict->value) {
      const Action action =
          grown->read_from_store ? strict->action : weaker(strict->action, Action::kWarn);
      s.add(RuleKind::kTrackedArrayLength, *strict, g.path, grown->length, index, &id, action);
      // Refused: the push never happens, so the length goes back to what it was (no $slice
      // here: a capped push cannot pass the bound).
      if (action == Action::kBlock && !s.dry_run) {
        tracker_.undo_grow(sc.key, g.path, g.elements, g.bytes);
      }
    }
  }
}

void ShapeCheck::length_unknown(CommandPass& s) const {
  if (measurements_ != nullptr && !s.dry_run) measurements_->on_length_unknown(s.stats->labels);
}

}  // namespace docguard::rules
