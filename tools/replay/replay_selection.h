// Which recorded requests a replay sends (ReplaySelection, replay_command.h): the request's own
// facts from the side file, and for a getMore or killCursors the request that opened its cursor
// (left out with it: it could only fail).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "docguard/base/expected.h"
#include "docguard/recording/recording_reader.h"
#include "docguard/tools/replay_command.h"

namespace docguard::tools {

// The selection's tests of one request, with its time bounds as recording offsets.
class RequestSelection {
 public:
  // `start_epoch_ms`: the recording's wall-clock start (its first data file's name), for RFC
  // 3339 bounds. An error for a bound that does not read.
  static base::Expected<RequestSelection> make(const ReplaySelection& selection,
                                               uint64_t start_epoch_ms);
  bool all() const { return all_; }
  // Whether a request's own facts match (its time, app, namespace, command, shape).
  bool matches(const recording::RecordedPacket& request) const;
  uint64_t from_offset() const { return from_; }
  uint64_t to_offset() const { return to_; }

 private:
  ReplaySelection selection_;
  uint64_t from_ = 0;
  uint64_t to_ = UINT64_MAX;
  bool all_ = true;
};

// Follows the recording in order: a cursor opened by a request left out is left out with it.
class SelectionTracker {
 public:
  explicit SelectionTracker(const RequestSelection& selection) : selection_(selection) {}
  // Whether the request is replayed. A getMore or killCursors of a cursor opened in the
  // recording goes with its opening request; one of a cursor opened before, by its own facts.
  bool selects(const recording::RecordedPacket& request);
  // A recorded reply: one to a request left out names a cursor left out too.
  void on_reply(const recording::RecordedPacket& reply);

 private:
  const RequestSelection& selection_;
  std::unordered_map<uint64_t, std::vector<int32_t>> left_out_;  // connection -> request ids
  std::unordered_set<int64_t> left_out_cursors_;
  std::unordered_set<int64_t> selected_cursors_;
  std::unordered_map<uint64_t, std::vector<int32_t>> selected_;  // connection -> request ids
};

// The recorded cursor id a reply opens (cursor.id), 0 when none.
int64_t reply_cursor_id(const std::vector<uint8_t>& reply);

}  // namespace docguard::tools
