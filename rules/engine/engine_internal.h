// Private to the engine's room: the thread-local state shared by the engine's source files
// (engine.cc, engine_writes.cc, engine_reads.cc, engine_status.cc, ...). One pass over a command
// is command_pass.h's; each check's scratch is its own.
#pragma once

#include <bson/bson.h>

#include <array>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/base/json_string.h"
#include "docguard/base/structured_log.h"
#include "docguard/codec/bson_elements.h"
#include "docguard/rules/command_pass.h"
#include "docguard/rules/document_shape.h"
#include "docguard/rules/engine.h"
#include "docguard/rules/write_statement.h"

namespace docguard::rules {

using codec::key_of;

namespace engine_detail {

// Upper bound on client apps and users named per namespace.
inline constexpr uint32_t kMaxOffenders = 16;

// The engine's own thread-local state (each check keeps its own): the thread's last answers
// for an app's label and a namespace's limits, and the reporting's scratch, whose vectors keep
// their capacity so that steady-state inspection does not allocate.
struct Scratch {
  struct LogDecision {
    bool log;
    uint64_t suppressed;
  };
  std::vector<LogDecision> log_decisions;
  // The namespace the command in judgement names (null: none, or a bulkWrite's several), for
  // the workload observer after the judgement.
  CollectionStats* judged_stats = nullptr;
  // The app this thread labelled last (labels are never removed, and a full set stays full
  // under the same max_apps, so the label stays right for the engine's life).
  uint64_t last_app_engine = 0;
  uint32_t last_app_max = 0;
  std::string last_app;
  const std::string* last_app_label = nullptr;
  // The limits this thread resolved last, for the rules in force [0] and the candidates [1]
  // (a command is judged with both, one after the other). `previous`: the answer before, kept
  // alive as the pass that holds it may outlive one more lookup (Engine::limits_for).
  struct LastLimits {
    uint64_t namespace_id = 0;
    uint64_t generation = 0;
    uint32_t scope = 0;
    std::shared_ptr<const NamespaceLimits> limits;
    std::shared_ptr<const NamespaceLimits> previous;
    void hold(std::shared_ptr<const NamespaceLimits> next) {
      previous = std::move(limits);
      limits = std::move(next);
    }
  };
  std::array<LastLimits, 2> last_limits;
};
inline Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

// The phases of the chain of checks are declared in check_phases.h; the engine runs each as
// `checks().run<phase::Start>(pass)`.

}  // namespace engine_detail

using namespace engine_detail;

}  // namespace docguard::rules
