// Document shapes as one check of the engine's chain: what a write does to a document's size,
// nesting and arrays (document_shape.h), judged against the namespace's bounds, recorded in its
// statistics, and remembered per document by the tracker (document_tracker.h) so that a later
// $push is judged against the array's whole length and its growth forecast. Owns the tracker,
// the forecast horizon and its own measuring scratch; documents read back (sampled replies,
// introspection) feed the same tracker.
//
// Thread safety: any thread, like the engine. measure() and measure_update() answer with the
// calling thread's scratch, valid until that thread measures again.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>
#include <vector>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/bson_view.h"
#include "docguard/rules/check_phases.h"
#include "docguard/rules/collection_stats.h"
#include "docguard/rules/command_pass.h"
#include "docguard/rules/document_shape.h"
#include "docguard/rules/document_tracker.h"
#include "docguard/rules/engine_sinks.h"
#include "docguard/rules/growth_forecast.h"
#include "docguard/rules/read_document.h"
#include "docguard/rules/rule_set.h"
#include "docguard/rules/write_statement.h"

namespace docguard::rules {

class ShapeCheck {
 public:
  // The phases of the chain of checks it takes part in (check_phases.h).
  using Phases = phase::List<phase::JudgeWrite, phase::LearnWrite, phase::LearnRead>;

  ShapeCheck(MeasurementSink* measurements, AdviceSink* advice, const TrackingLimits& tracking);
  ShapeCheck(const ShapeCheck&) = delete;
  ShapeCheck& operator=(const ShapeCheck&) = delete;

  // A reload's tracker bounds.
  void set_tracking(const TrackingLimits& tracking);

  // A whole written document (an insert, a replacement) measured, for the statement the
  // chain judges (write_statement.h).
  static const DocumentShape& measure(const codec::BsonView& doc);
  // The same, read from the outline the validating walk took of it when it has one.
  static const DocumentShape& measure(const codec::BsonView& doc,
                                      const codec::DocumentOutline& outline);
  // An operator update (or pipeline) measured.
  static const UpdateShape& measure_update(const codec::BsonView& u, bool pipeline);

  // Its phases in the chain of checks (check_chain.h).
  // A written document against the namespace's bounds (document size, nesting, array lengths);
  // an operator update's whole arrays and documents set by $set, and its pushes
  // (require_push_slice, the array bounds).
  void judge_write(CommandPass& pass, const InsertStatement& insert) {
    judge(pass, *insert.shape, true, insert.index, insert.id);
  }
  void judge_write(CommandPass& pass, const ReplacementStatement& replacement) {
    judge(pass, *replacement.shape, true, replacement.index, replacement.id);
  }
  void judge_write(CommandPass& pass, const OperatorUpdateStatement& update) {
    judge_update(pass, *update.shape, update.id, update.index);
  }
  // After every check judged the statement: its shape recorded, and the arrays of the document
  // it writes tracked unless it was refused. A push is then judged against the tracked length
  // (tracked_array_length); a deleted document's arrays are forgotten.
  void learn_write(CommandPass& pass, const InsertStatement& insert) {
    learn_insert(pass, *insert.shape, insert.index);
  }
  void learn_write(CommandPass& pass, const ReplacementStatement& replacement) {
    learn_replacement(pass, *replacement.shape, replacement.id, replacement.index);
  }
  void learn_write(CommandPass& pass, const OperatorUpdateStatement& update) {
    // Only a document known by its _id is tracked; most updates set scalars, with no array to
    // track or judge against its tracked length.
    const UpdateShape& shape = *update.shape;
    if (!pass.tracks_arrays() || pass.blocked(update.index)) return;
    if (update.id != nullptr) {
      if (shape.growth_count() > 0 || shape.set_values().array_count() > 0) {
        track_update(pass, shape, *update.id, update.index);
      }
    } else if (shape.growth_count() > 0) {
      length_unknown(pass);
    }
  }
  void learn_write(CommandPass& pass, const DeleteStatement& del) {
    if (!pass.blocked(del.index)) forget(pass, del.filter_id);
  }

  // A document read back: a sampled reply's shape recorded, and the arrays of a document whose
  // namespace has array bounds remembered (as facts when read from the store).
  void learn_read(const ReadDocument& read);

  // Each growing array's time to its bounds, soonest first (for scrapes and reports).
  std::vector<PathForecast> forecasts(double now) const;
  size_t tracked_documents() const { return tracker_.size(); }
  // A document whose forecast falls under this many seconds is logged once.
  void set_forecast_horizon(double seconds) {
    forecast_horizon_.store(seconds, std::memory_order_relaxed);
  }
  double forecast_horizon() const { return forecast_horizon_.load(std::memory_order_relaxed); }

 private:
  // A measured shape against the namespace's bounds. `whole_document` is false for values of
  // $set, whose size says nothing about the document's.
  static void judge(CommandPass& pass, const DocumentShape& shape, bool whole_document,
                    int32_t index, const codec::BsonElements* id);
  // An operator update judged, and what it sends recorded (its $set arrays, its pushes).
  void judge_update(CommandPass& pass, const UpdateShape& update, const codec::BsonElements* id,
                    int32_t index);
  // An insert: recorded, and its arrays tracked unless refused.
  void learn_insert(CommandPass& pass, const DocumentShape& shape, int32_t index);
  // A replacement of document `id` (null: not known): recorded, and its growth histories
  // started again unless refused.
  void learn_replacement(CommandPass& pass, const DocumentShape& shape,
                         const codec::BsonElements* id, int32_t index);
  // An operator update of document `id`, not refused: its arrays set by $set and its pushes
  // tracked, and each push judged against the tracked length.
  void track_update(CommandPass& pass, const UpdateShape& update, const codec::BsonElements& id,
                    int32_t index);
  // A push whose resulting length cannot be judged: told to the measurements.
  void length_unknown(CommandPass& pass) const;
  // A delete of the document `id` (null: its filter names none by _id): its tracked arrays are
  // forgotten.
  void forget(CommandPass& pass, const codec::BsonElements* id);
  // A document read back: its shape recorded when `record_shape` (a reply), its arrays'
  // lengths remembered as facts when `track_arrays`.
  void remember_read(std::string_view db, std::string_view coll, CollectionStats* stats,
                     const codec::BsonView& document, bool record_shape, bool track_arrays,
                     double now, uint32_t max_fields);
  // Records a measured shape in the statistics and tells the measurement sink.
  void record(CollectionStats* stats, const DocumentShape& shape, std::string_view source,
              bool whole_document, uint32_t max_fields);
  // Document `id`'s array lengths into the tracker: from a write, or read from the store (a
  // fact); `replaced` starts its growth histories again first.
  void track(std::string_view db, std::string_view coll, const codec::BsonElements& id,
             const DocumentShape& shape, bool replaced, bool from_store, double now);
  // The log line for a document whose forecast just fell under the horizon (at most one a
  // second; the ones left out are counted in the next).
  void log_entered_horizon(const CommandPass& pass, std::string_view field,
                           const DocumentTracker::EnteredHorizon& entered, uint32_t length);

  MeasurementSink* measurements_;
  AdviceSink* advice_;
  DocumentTracker tracker_;
  std::atomic<double> forecast_horizon_{7 * 24 * 3600.0};
  std::atomic<int64_t> horizon_logged_ms_{0};
  std::atomic<uint64_t> horizon_suppressed_{0};
};

}  // namespace docguard::rules
