#include "docguard/rules/collection_stats.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>

#include "docguard/base/short_equal.h"

namespace docguard::rules {

namespace {
std::atomic<uint64_t> g_next_namespace_id{1};
}  // namespace

CollectionStats::CollectionStats(std::string db_name, std::string coll_name)
    : db(std::move(db_name)),
      coll(std::move(coll_name)),
      labels{db, coll, g_next_namespace_id.fetch_add(1, std::memory_order_relaxed)} {}

void LookupWindow::reset(std::chrono::seconds window) {
  window_seconds_.store(window.count(), std::memory_order_relaxed);
  slot_ms_.store(std::max<int64_t>(1, window.count() * 1000 / static_cast<int64_t>(kSlots)),
                 std::memory_order_relaxed);
  for (auto& slot : reads_) slot.store(0, std::memory_order_relaxed);
  for (auto& slot : lookups_) slot.store(0, std::memory_order_relaxed);
}

uint64_t LookupWindow::epoch_of(Clock::time_point now) const {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch());
  return static_cast<uint64_t>(ms.count() / slot_ms_.load(std::memory_order_relaxed));
}

[[gnu::always_inline]] inline void LookupWindow::count(std::atomic<uint64_t>& slot,
                                                       uint64_t epoch) {
  const uint64_t stamp = (epoch & kEpochMask) << kCountBits;
  uint64_t word = slot.load(std::memory_order_relaxed);
  while (true) {
    if ((word & ~kCountMask) == stamp) {
      // The slot's period: one more, unless full (2^40 reads in one slot). A thread that
      // waited a whole window between the load and the add counts its read in the slot's next
      // period, which no total tells from its own.
      if ((word & kCountMask) != kCountMask) slot.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    // An older period: this read starts the slot's new one.
    if (slot.compare_exchange_weak(word, stamp | 1, std::memory_order_relaxed)) return;
  }
}

uint64_t LookupWindow::count_in(const std::atomic<uint64_t>& slot, uint64_t epoch) {
  const uint64_t word = slot.load(std::memory_order_relaxed);
  const uint64_t age = (epoch - (word >> kCountBits)) & kEpochMask;
  return age < kSlots ? word & kCountMask : 0;
}

void LookupWindow::add(Clock::time_point now, bool with_lookup) {
  const uint64_t epoch = epoch_of(now);
  const size_t slot = epoch % kSlots;
  count(reads_[slot], epoch);
  if (with_lookup) count(lookups_[slot], epoch);
}

LookupWindow::Totals LookupWindow::totals(Clock::time_point now) const {
  const uint64_t epoch = epoch_of(now);
  Totals t;
  for (size_t i = 0; i < kSlots; ++i) {
    t.reads += count_in(reads_[i], epoch);
    t.lookups += count_in(lookups_[i], epoch);
  }
  return t;
}

std::pair<const std::string, CollectionStats::FieldStats>& CollectionStats::field(
    std::string_view path, uint32_t max_fields) {
  if (last_field != nullptr && base::same_text(last_field->first, path)) return *last_field;
  auto it = fields.find(path);
  if (it == fields.end()) {
    it = fields.size() < max_fields ? fields.try_emplace(std::string(path)).first
                                    : fields.try_emplace(std::string(kOverflowLabel)).first;
  }
  last_field = &*it;
  return *it;
}

namespace {
template <typename Map>
const std::string& count_bounded(Map& map, std::string_view key, uint32_t max) {
  auto it = map.find(key);
  if (it == map.end()) {
    it = map.size() < max ? map.try_emplace(std::string(key)).first
                          : map.try_emplace(std::string(kOverflowLabel)).first;
  }
  ++it->second;
  return it->first;
}
}  // namespace

void CollectionStats::count_offender(std::string_view app, uint32_t max_apps) {
  count_bounded(offenders, app.empty() ? std::string_view("(no app name)") : app, max_apps);
}

void CollectionStats::count_offending_user(std::string_view user, uint32_t max_users) {
  count_bounded(offending_users, user.empty() ? std::string_view("(not authenticated)") : user,
                max_users);
}

const std::string& CollectionStats::count_from(std::string_view from, uint32_t max_froms) {
  return count_bounded(lookup_from, from, max_froms);
}

}  // namespace docguard::rules
