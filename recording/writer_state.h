// What the recorder's parts share (private to recording/): a recording's filters, and the
// writer thread's memory of the connections.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "docguard/codec/redaction_policy.h"
#include "docguard/codec/sensitive_cursors.h"
#include "docguard/recording/recorder.h"

namespace docguard::recording {

// One recording's settings, shared by the sessions' taps while it runs.
struct RecordingFilters {
  settings::RecordingSettings settings;
  uint64_t generation = 0;
};

// A sensitive request still awaiting its reply: its id, and the cursor it continues (a
// getMore's, forgotten when the reply exhausts it).
struct SensitiveRequest {
  int32_t request_id = 0;
  int64_t cursor = 0;
};

struct Recorder::WriterState {
  codec::RedactionPolicy policy;  // the recording's, copied when its writer starts
  // connection -> its sensitive requests, whose replies carry secrets too
  std::unordered_map<uint64_t, std::vector<SensitiveRequest>> sensitive;
  // The cursors sensitive requests' replies opened, in every connection (a cursor may be
  // continued from another): their getMores and killCursors are sensitive too.
  codec::SensitiveCursors cursors;
  // connections started and not yet ended -> their session text, ended when the recording ends
  std::unordered_map<uint64_t, std::string> open;
  // connection -> its hello requests' ids, whose replies say which cluster answered
  std::unordered_map<uint64_t, std::vector<int32_t>> hellos;
  // The upstream identities already written: each is written once, on the first reply that
  // shows it (a replica set's members alternate; bounded).
  std::vector<std::string> sources;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  bool broken = false;  // a write failed or the cap was reached: nothing more goes to the files
};

}  // namespace docguard::recording
