// One pass of the checks over one command, with the rules in force or the candidate rules
// (dry_run). The engine builds it and hands it down the chain of checks (check_chain.h); each
// check reads what it judges from it and reports what it finds with add(). A check owns its own
// state and scratch: the pass carries only what every check shares. Only the rules library
// reads it (its checks' phases take it), though its header is public for them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "docguard/base/structured_log.h"
#include "docguard/codec/bson_elements.h"
#include "docguard/codec/command_view.h"
#include "docguard/rules/collection_stats.h"
#include "docguard/rules/rule_hits.h"
#include "docguard/rules/rule_set.h"
#include "docguard/rules/verdict.h"

namespace docguard::rules {

using codec::CommandKind;

// The engine's clock: steady time, replaced in tests (set_clock).
using EngineClock = std::chrono::steady_clock;
using ClockOverride = std::function<EngineClock::time_point()>;

// Now, for a rule's "last hit" and an `allow` entry's expiry (wall clock, milliseconds since the
// epoch).
int64_t wall_ms();

inline Action weaker(Action a, Action b) { return a < b ? a : b; }

struct CommandPass {
  const codec::CommandView& cmd;
  const RequestContext& ctx;
  const RuleSet& rules;
  Verdict& verdict;
  CollectionStats* stats;
  const NamespaceLimits* limits;  // Engine::limits_for's, alive for the pass
  std::string_view db;
  std::string_view coll;
  const ClockOverride* clock = nullptr;  // null or empty: the steady clock
  bool whole_command = false;            // a blocking violation refuses the whole command
  const RuleHitsTable* hits = nullptr;   // the counters of `rules`' rules
  // Judging candidate rules: measure and judge only. Nothing is recorded (statistics, tracker,
  // sinks), so the pass leaves no trace but its own counters.
  bool dry_run = false;
  // The client's app as the sinks label it (tracking.max_apps); set only when recording with
  // a sink.
  std::string_view app = {};
  // Steady seconds for the growth forecast, read once per command when first needed (< 0: not
  // yet).
  double seconds = -1;

  EngineClock::time_point now() const {
    if (clock != nullptr && *clock) return (*clock)();
    return ctx.received != EngineClock::time_point{} ? ctx.received : EngineClock::now();
  }
  double seconds_now() {
    if (seconds < 0) seconds = std::chrono::duration<double>(now().time_since_epoch()).count();
    return seconds;
  }

  // A broken rule: into the verdict, and into its refusal when the action blocks.
  void add(RuleKind kind, const Bound& bound, std::string_view path, double measured, int32_t index,
           const codec::BsonElements* id, Action action);
  void add(RuleKind kind, const Bound& bound, std::string_view path, double measured, int32_t index,
           const codec::BsonElements* id) {
    add(kind, bound, path, measured, index, id, bound.action);
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

}  // namespace docguard::rules
