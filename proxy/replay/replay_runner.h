// The replay itself: the recording read into connections, each replayed on a thread of its own
// with a client from one libmongoc pool, paced to the recorded offsets.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "docguard/base/expected.h"
#include "docguard/proxy/replay_compare.h"

namespace docguard::proxy {

struct ReplayOptions {
  std::filesystem::path recording;
  std::string target;  // a mongodb:// URI, with its own credentials and TLS options
  double speed = 1;    // recorded time / replay time; 0: no waiting at all
  bool read_only = false;
  std::filesystem::path report_dir = ".";
};

struct ReplayCounts {
  uint64_t connections = 0;
  uint64_t requests = 0;         // recorded requests
  uint64_t sent = 0;             // replayed
  uint64_t handshakes = 0;       // not replayed: hello, authentication, markers
  uint64_t skipped_writes = 0;   // --read-only
  uint64_t skipped_legacy = 0;   // legacy requests that are not commands
  uint64_t failed = 0;           // sent, but no reply came (network, server selection)
  uint64_t recorded_micros = 0;  // first to last packet of the recording
  uint64_t replay_micros = 0;    // wall time of the replay
  // Per command name: how many were sent, and how many the target answered with ok: 1.
  std::map<std::string, std::pair<uint64_t, uint64_t>> commands;
};

struct ReplayOutcome {
  ReplayCounts counts;
  std::vector<ComparedOperation> operations;
};

// Progress the command line shows while the replay runs: requests done of `total`.
struct ReplayProgress {
  std::atomic<uint64_t> done{0};
  std::atomic<uint64_t> total{0};
};

base::Expected<ReplayOutcome> replay_recording(const ReplayOptions& options,
                                               ReplayProgress& progress);

}  // namespace docguard::proxy
