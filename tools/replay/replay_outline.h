// The replay's first pass over a recording (nothing sent): its connections, how many were open
// at once, its span, the cluster it was recorded from, and which requests the selection keeps.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "docguard/base/expected.h"
#include "docguard/recording/recorded_source.h"
#include "docguard/tools/replay_command.h"
#include "replay_selection.h"

namespace docguard::tools {

// Where the recorded traffic went: the upstream addresses (as configured and as connected) and
// the identities the upstream's hello replies gave.
struct RecordedSource {
  std::vector<std::string> upstreams;
  std::vector<recording::SourceIdentity> identities;
};

struct RecordingOutline {
  std::unordered_map<uint64_t, uint64_t> last_order;  // connection -> its last packet's order
  uint64_t connections = 0;
  uint64_t peak_connections = 0;
  uint64_t requests = 0;
  uint64_t first_offset = 0;
  uint64_t last_offset = 0;
  // The first and last selected request's offsets: a paced replay of part of a recording
  // starts at its first and ends at its last.
  uint64_t selected_first = 0;
  uint64_t selected_last = 0;
  uint64_t unverified_files = 0;
  uint64_t start_epoch_ms = 0;  // the first data file's name: when the recording started
  RecordedSource source;
  RequestSelection selection;
};

// Reads the whole recording (checksums checked) and measures the connections open at once.
base::Expected<RecordingOutline> outline(const ReplayOptions& options);

}  // namespace docguard::tools
