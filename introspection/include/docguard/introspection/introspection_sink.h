// What an introspection pass reports about itself: where it goes (Prometheus today) is the
// business of the layer that wires the introspector, so this layer needs no metrics library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace docguard::introspection {

class IntrospectionSink {
 public:
  virtual ~IntrospectionSink() = default;
  // One pass ended: "ok", "partial" (some facts unknown), "failed", "shared" (another instance
  // of the fleet holds the lease: its facts were loaded).
  virtual void count_run(const std::string& result) = 0;
  virtual void observe_seconds(double seconds) = 0;
  // Commands sent to the cluster (a pass's, or a catch-up's between passes).
  virtual void add_commands(uint64_t n) = 0;
  // Facts the last pass could not read (rights, server support).
  virtual void set_unknown_facts(size_t n) = 0;
};

}  // namespace docguard::introspection
