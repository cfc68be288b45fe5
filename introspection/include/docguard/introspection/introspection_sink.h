// What an introspection pass reports about itself: where it goes (Prometheus today) is the
// business of the layer that wires the introspector, so this layer needs no metrics library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "docguard/base/enum_names.h"

namespace docguard::introspection {

// How a pass ended. Its name is the `result` label of docguard_introspection_runs_total and
// /status's last_result: dashboards match these names, so a listed one never changes.
enum class PassResult : uint8_t {
  kNone,     // no pass yet
  kOk,       // every fact read
  kPartial,  // some facts unknown (rights, server support)
  kFailed,   // the pass could not read the cluster; retried at the next pass
  kShared,   // another instance of the fleet holds the lease: its stored facts were loaded
};
inline constexpr base::EnumNames<PassResult, 5> kPassResultNames{
    {{
        {PassResult::kNone, "none"},
        {PassResult::kOk, "ok"},
        {PassResult::kPartial, "partial"},
        {PassResult::kFailed, "failed"},
        {PassResult::kShared, "shared"},
    }},
    "none"};

class IntrospectionSink {
 public:
  virtual ~IntrospectionSink() = default;
  // One pass ended.
  virtual void count_run(PassResult result) = 0;
  virtual void observe_seconds(double seconds) = 0;
  // Commands sent to the cluster (a pass's, or a catch-up's between passes).
  virtual void add_commands(uint64_t n) = 0;
  // Facts the last pass could not read (rights, server support).
  virtual void set_unknown_facts(size_t n) = 0;
};

}  // namespace docguard::introspection
