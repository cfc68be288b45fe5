// The replay itself: the recording streamed in its global order, each recorded connection
// replayed on a thread and a client slot of its own, paced to the recorded offsets and kept to
// the recorded causality, each answer compared as it comes.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "docguard/base/expected.h"
#include "docguard/tools/replay_command.h"
#include "docguard/tools/replay_compare.h"
#include "replay_abort.h"
#include "replay_policy.h"

namespace docguard::tools {

struct ReplayCounts {
  uint64_t connections = 0;
  uint64_t requests = 0;         // recorded requests
  uint64_t sent = 0;             // replayed
  uint64_t handshakes = 0;       // not replayed: hello, authentication, endSessions
  uint64_t skipped_writes = 0;   // --read-only
  uint64_t skipped_legacy = 0;   // legacy requests that are not commands
  uint64_t failed = 0;           // sent, but no reply came (network, server selection)
  uint64_t recorded_micros = 0;  // first to last packet of the recording
  uint64_t replay_micros = 0;    // wall time of the replay
  // Not sent, by reason (replay_policy.h's names), and the commands off the allow-list by name.
  std::map<std::string, uint64_t> skipped;
  std::map<std::string, uint64_t> skipped_commands;
  uint64_t trimmed_batches = 0;       // sent without the statements docguard refused
  uint64_t exhaust_not_compared = 0;  // an exhaust cursor's further recorded replies
  uint64_t sessions = 0;              // live sessions, one per recorded lsid
  uint64_t peak_connections = 0;      // recorded connections open at once
  uint64_t unverified_files = 0;      // data files without a checksum
  // Per command name: how many were sent, and how many the target answered with ok: 1.
  std::map<std::string, std::pair<uint64_t, uint64_t>> commands;
};

struct ReplayOutcome {
  ReplayCounts counts;
  std::vector<ShapeResult> shapes;
  std::optional<ReplayAbort> aborted;  // the target failed: the replay stopped early
  bool dry_run = false;                // nothing was sent: counts say what would have been
};

// Progress the command line shows while the replay runs: requests done of `total`.
struct ReplayProgress {
  std::atomic<uint64_t> done{0};
  std::atomic<uint64_t> total{0};
};

// Counts a request not sent, by its reason.
void count_skip(ReplayCounts& counts, const RequestClass& kind);

// An error (exit code 2) for a recording that cannot be read, a target that cannot be reached
// or refuses authentication or is the recording's own source, a replay expected to last longer
// than --max-duration, or more connections at once than allowed.
base::Expected<ReplayOutcome> replay_recording(const ReplayOptions& options,
                                               ReplayProgress& progress);

}  // namespace docguard::tools
