// The cursors the replies to sensitive requests opened. A cursor's later batches come from the
// same documents as its first: an aggregate that joins a secret namespace ($lookup) answers its
// getMores with the joined documents, under a cursor whose namespace is not secret. The
// recording remembers these cursors so their getMores and killCursors, and the replies to them,
// are redacted as the request that opened them was.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_set>

namespace docguard::codec {

class SensitiveCursors {
 public:
  // What a recording remembers by default: far more cursors than a workload keeps open at once.
  static constexpr size_t kDefaultLimit = 10000;

  explicit SensitiveCursors(size_t limit = kDefaultLimit) : limit_(limit) {}

  // A cursor a sensitive request's reply opened (id 0, no cursor, is not remembered). Past the
  // limit, nothing is remembered any more and every cursor is taken for a sensitive one.
  void remember(int64_t id);
  // A cursor exhausted (its last reply's id is 0) or killed.
  void forget(int64_t id) { ids_.erase(id); }
  // Whether a getMore or killCursors naming `id` is sensitive: always, once past the limit (a
  // cursor that may have been forgotten is not taken for a harmless one).
  bool names(int64_t id) const { return overflowed_ || ids_.contains(id); }

  size_t size() const { return ids_.size(); }
  bool overflowed() const { return overflowed_; }

 private:
  std::unordered_set<int64_t> ids_;
  size_t limit_;
  bool overflowed_ = false;
};

}  // namespace docguard::codec
