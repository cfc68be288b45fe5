// The replay's first pass over a recording (nothing sent): its connections, how many were open
// at once, its span, the cluster it was recorded from, and which requests the selection keeps.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
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
  // Requests whose recorded reply refused them for their form or as unauthorized
  // (recorded_refusal_code): (connection, request id) -> the code, known before the request is
  // met in the second pass. Bounded (kMaxRecordedRefusals).
  std::map<std::pair<uint64_t, int32_t>, int32_t> refused_when_recorded;
};

// How many refused requests the first pass remembers: a recording with more is refused (exit 2)
// rather than replayed with some of them sent.
inline constexpr size_t kMaxRecordedRefusals = 1'000'000;

// The code the recorded server refused request `request_id` of `connection` with, for its form
// or as unauthorized (classify_request's `recorded_refusal`); 0 when it did not.
inline int32_t recorded_refusal(const RecordingOutline& o, uint64_t connection,
                                int32_t request_id) {
  const auto found = o.refused_when_recorded.find({connection, request_id});
  return found == o.refused_when_recorded.end() ? 0 : found->second;
}

// Reads the whole recording (checksums checked) and measures the connections open at once.
base::Expected<RecordingOutline> outline(const ReplayOptions& options);

}  // namespace docguard::tools
