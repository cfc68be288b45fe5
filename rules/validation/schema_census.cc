#include "docguard/rules/schema_census.h"

#include <algorithm>

namespace docguard::rules {

namespace {

int64_t minute_of(SchemaCensus::Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::minutes>(t.time_since_epoch()).count();
}

template <typename Map>
auto& bounded(Map& map, std::string_view name, size_t max) {
  auto it = map.find(name);
  if (it != map.end()) return it->second;
  const std::string key = map.size() < max ? std::string(name) : std::string("_other");
  return map[key];
}

std::vector<std::pair<std::string, uint64_t>> most_first(
    std::vector<std::pair<std::string, uint64_t>> v) {
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

}  // namespace

SchemaCensus::Entry* SchemaCensus::entry(std::string_view db, std::string_view coll,
                                         std::string_view rule, bool candidate) {
  Key key{std::string(db), std::string(coll), std::string(rule), candidate};
  auto it = entries_.find(key);
  if (it != entries_.end()) return &it->second;
  if (entries_.size() >= kMaxEntries) return nullptr;
  return &entries_[key];
}

void SchemaCensus::stored(std::string_view db, std::string_view coll, std::string_view rule,
                          bool candidate, bool failing,
                          const std::vector<std::string>& properties) {
  std::lock_guard lock(mutex_);
  Entry* e = entry(db, coll, rule, candidate);
  if (e == nullptr) return;
  ++e->stored_sampled;
  if (!failing) return;
  ++e->stored_failing;
  for (const std::string& p : properties) ++bounded(e->properties, p, kMaxProperties);
}

void SchemaCensus::write_failed(std::string_view db, std::string_view coll, std::string_view rule,
                                bool candidate, std::string_view app, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  Entry* e = entry(db, coll, rule, candidate);
  if (e == nullptr) return;
  Hour& hour = bounded(e->apps, app, kMaxApps);
  const int64_t m = minute_of(now);
  Slot& slot = hour[static_cast<size_t>(m % 60)];
  if (slot.minute != m) slot = Slot{m, 0};
  ++slot.count;
}

std::vector<ValidatorCensus> SchemaCensus::snapshot(Clock::time_point now) const {
  std::lock_guard lock(mutex_);
  const int64_t m = minute_of(now);
  std::vector<ValidatorCensus> out;
  for (const auto& [key, e] : entries_) {
    ValidatorCensus c;
    std::tie(c.db, c.collection, c.rule, c.candidate) = key;
    c.stored_sampled = e.stored_sampled;
    c.stored_failing = e.stored_failing;
    c.failing_properties = most_first({e.properties.begin(), e.properties.end()});
    std::vector<std::pair<std::string, uint64_t>> apps;
    for (const auto& [app, hour] : e.apps) {
      uint64_t n = 0;
      for (const Slot& s : hour) {
        if (s.minute > m - 60 && s.minute <= m) n += s.count;
      }
      if (n > 0) apps.emplace_back(app, n);
    }
    c.writes_failing_by_app = most_first(std::move(apps));
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace docguard::rules
