#include "docguard/rules/collection_stats.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>

namespace docguard::rules {

namespace {
std::atomic<uint64_t> g_next_namespace_id{1};
}  // namespace

CollectionStats::CollectionStats(std::string db_name, std::string coll_name)
    : db(std::move(db_name)),
      coll(std::move(coll_name)),
      labels{db, coll, g_next_namespace_id.fetch_add(1, std::memory_order_relaxed)} {}

void LookupWindow::set_window(std::chrono::seconds window) {
  if (window == window_) return;
  window_ = window;
  slot_ms_ = std::max<int64_t>(1, window.count() * 1000 / static_cast<int64_t>(kSlots));
  slots_ = {};
}

int64_t LookupWindow::epoch_of(Clock::time_point now) const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() /
         slot_ms_;
}

void LookupWindow::add(Clock::time_point now, bool with_lookup) {
  const int64_t epoch = epoch_of(now);
  Slot& s = slots_[static_cast<size_t>(epoch % static_cast<int64_t>(kSlots))];
  if (s.epoch != epoch) s = Slot{epoch, 0, 0};
  ++s.reads;
  if (with_lookup) ++s.lookups;
}

LookupWindow::Totals LookupWindow::totals(Clock::time_point now) const {
  const int64_t epoch = epoch_of(now);
  Totals t;
  for (const Slot& s : slots_) {
    if (s.epoch > epoch - static_cast<int64_t>(kSlots) && s.epoch <= epoch) {
      t.reads += s.reads;
      t.lookups += s.lookups;
    }
  }
  return t;
}

std::pair<const std::string, CollectionStats::FieldStats>& CollectionStats::field(
    std::string_view path, uint32_t max_fields) {
  auto it = fields.find(path);
  if (it != fields.end()) return *it;
  if (fields.size() < max_fields) return *fields.try_emplace(std::string(path)).first;
  return *fields.try_emplace(std::string(kOverflowLabel)).first;
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
