// Private to the rules library: the state of one pass over a command (CommandPass) and the
// thread-local measuring state shared by the engine's source files (engine.cc dispatch,
// engine_writes.cc, engine_reads.cc, engine_status.cc).
#pragma once

#include <bson/bson.h>

#include <array>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/base/json_string.h"
#include "docguard/base/structured_log.h"
#include "docguard/codec/bson_elements.h"
#include "docguard/rules/document_shape.h"
#include "docguard/rules/engine.h"
#include "docguard/rules/lookup_walker.h"

namespace docguard::rules {

using codec::CommandKind;
using codec::key_of;

namespace engine_detail {

// Upper bounds on names kept per namespace besides field paths.
inline constexpr uint32_t kMaxOffenders = 16;
inline constexpr uint32_t kMaxLookupFroms = 32;

// Finds _id in a filter when it is an equality (a value, not {$in: ...}): the document the
// statement targets is then known.
inline bool id_equality(const codec::BsonView& q, codec::BsonElements* id) {
  if (!codec::well_framed(q)) return false;
  *id = codec::BsonElements(q);
  if (!id->find("_id")) return false;
  if (id->holds_document()) return !is_operator_document(id->container());
  return true;
}

inline Action weaker(Action a, Action b) { return a < b ? a : b; }

// Whether `ns` is "db.coll".
inline bool is_namespace(std::string_view ns, std::string_view db, std::string_view coll) {
  return ns.size() == db.size() + 1 + coll.size() && ns[db.size()] == '.' && ns.starts_with(db) &&
         ns.ends_with(coll);
}

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
  // The document a $jsonSchema judges when the written one has no _id (schema judgement only).
  std::vector<uint8_t> post_image;
  // The query guardrail counted this command as not judged (indexes unknown) already.
  bool guardrail_unknown_counted = false;
  // The namespace the command in judgement names (null: none, or a bulkWrite's several), for
  // the workload ledger after the judgement.
  CollectionStats* judged_stats = nullptr;
  std::vector<const Limit*> growth_limits;
  std::string ns_buffer;
  // The namespace this thread looked up last, and its statistics (namespaces are never removed,
  // so the pointer stays valid for the engine's life).
  uint64_t last_engine = 0;
  std::string last_ns;
  CollectionStats* last_stats = nullptr;
  // The app this thread labelled last (labels are never removed, and a full set stays full
  // under the same max_apps, so the label stays right for the engine's life).
  uint64_t last_app_engine = 0;
  uint32_t last_app_max = 0;
  std::string last_app;
  const std::string* last_app_label = nullptr;
  // The limits this thread resolved last, for the rules in force [0] and the candidates [1]
  // (a command is judged with both, one after the other).
  struct LastLimits {
    uint64_t namespace_id = 0;
    uint64_t generation = 0;
    uint32_t scope = 0;
    std::shared_ptr<const NamespaceLimits> limits;
  };
  std::array<LastLimits, 2> last_limits;
  // "db.coll" in ns_buffer; consecutive calls mostly name the same namespace, which is then
  // compared in place rather than copied again.
  const std::string& ns_of(std::string_view db, std::string_view coll) {
    if (!is_namespace(ns_buffer, db, coll)) ns_buffer.assign(db).append(".").append(coll);
    return ns_buffer;
  }
};
inline Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

// Now, for a rule's "last hit" (wall clock, milliseconds since the epoch).
int64_t wall_ms();

// Records a measured shape in the statistics and tells the measurement sink (engine_writes.cc).
void record_shape(CollectionStats* stats, MeasurementSink* measurements, const DocumentShape& shape,
                  const char* source, bool whole_document, uint32_t max_fields);

}  // namespace engine_detail

using namespace engine_detail;

// The query guardrail's own state (engine_guardrail.cc).
struct Engine::GuardrailState {
  std::mutex mutex;
  // Expired `allow` exceptions already logged: "line|shape|until".
  std::set<std::string> expired_logged;
};

// One pass over one command, with the rules in force or the candidate rules (dry_run): what it
// judges, where it reports.
struct Engine::CommandPass {
  const codec::CommandView& cmd;
  const RequestContext& ctx;
  const RuleSet& rules;
  Verdict& verdict;
  CollectionStats* stats;
  std::shared_ptr<const NamespaceLimits> limits;
  std::string_view db;
  std::string_view coll;
  bool whole_command = false;           // a blocking violation refuses the whole command
  const RuleHitsTable* hits = nullptr;  // the counters of `rules`' rules
  // Judging candidate rules: measure and judge only. Nothing is recorded (statistics, tracker,
  // sinks), so the pass leaves no trace but its own counters.
  bool dry_run = false;
  // The client's app as the sinks label it (tracking.max_apps); set only when recording with
  // a sink.
  std::string_view app = {};
  // Steady seconds for the growth forecast, read once per command when first needed (< 0: not
  // yet).
  double seconds = -1;

  void add(RuleKind kind, const Bound& bound, std::string_view path, double measured, int32_t index,
           const codec::BsonElements* id, Action action) {
    Violation v;
    v.kind = kind;
    v.rule_match = bound.match;
    v.rule_line = bound.line;
    v.rule_index = bound.rule;
    if (hits != nullptr) v.hits = hits->at(bound.rule);
    v.field_path = std::string(path);
    v.measured = measured;
    v.bound = bound.value;
    v.action = action;
    v.statement_index = index;
    if (id != nullptr) {
      bson_t b = BSON_INITIALIZER;
      if (id->append_to(&b, "_id")) {
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
           const codec::BsonElements* id) {
    add(kind, bound, path, measured, index, id, bound.action);
  }

  // Checks a measured shape. `whole_document` is false for values of $set, whose size says
  // nothing about the document's.
  void check_shape(const DocumentShape& shape, bool whole_document, int32_t index,
                   const codec::BsonElements* id) {
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

  bool tracks_arrays() const { return limits->tracks_arrays; }

  // Whether statement `index` (-1: the command) is refused. The tracker learns only from
  // writes that reach the upstream, or it would count growth that never happened.
  bool blocked(int32_t index) const {
    if (verdict.block_command) return true;
    return index >= 0 && !verdict.blocked_statements.empty() &&
           verdict.blocked_statements.back() == index;
  }
  // An ordered batch stops at its first refused statement: later ones never run. A dry run
  // judges every statement: none was refused, so each one that breaks a candidate counts.
  bool batch_stopped() const {
    return !dry_run && cmd.ordered && !verdict.blocked_statements.empty();
  }
  // The log fields of a violation after its rule and action, the same for violations and
  // candidate rules' would-be violations: names and numbers only, never document values.
  void add_violation_fields(log::Fields& fields, const Violation& v, uint64_t suppressed) const;
};

inline double Engine::seconds_of(CommandPass& s) const {
  if (s.seconds < 0) s.seconds = seconds_now();
  return s.seconds;
}

}  // namespace docguard::rules
