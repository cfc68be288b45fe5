// The recording's memory of sensitive cursors (sensitive_cursors.h).
#include "docguard/codec/sensitive_cursors.h"

namespace docguard::codec {

void SensitiveCursors::remember(int64_t id) {
  if (id == 0 || overflowed_ || ids_.contains(id)) return;
  if (ids_.size() >= limit_) {
    // The memory is full: rather than forget a cursor whose batches are secret, every cursor is
    // taken for one from here on (its ids are of no use any more).
    overflowed_ = true;
    ids_.clear();
    return;
  }
  ids_.insert(id);
}

}  // namespace docguard::codec
