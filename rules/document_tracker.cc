#include "docguard/rules/document_tracker.h"

#include <algorithm>
#include <functional>

namespace docguard::rules {

DocumentTracker::DocumentTracker(uint32_t capacity, uint32_t max_fields) : max_fields_(max_fields) {
  set_limits(capacity, max_fields);
}

void DocumentTracker::set_limits(uint32_t capacity, uint32_t max_fields) {
  max_fields_ = max_fields;
  for (size_t i = 0; i < kShards; ++i) {
    Shard& s = shards_[i];
    std::lock_guard lock(s.mutex);
    // Spread the capacity; a zero total disables tracking.
    s.capacity = capacity / kShards + (i < capacity % kShards ? 1 : 0);
    while (s.lru.size() > s.capacity) evict(s);
  }
}

void DocumentTracker::make_key(std::string_view ns, const bson_iter_t& id, std::string* key) {
  // Namespace, NUL, BSON type byte, raw value bytes: equal _id values give equal keys.
  key->assign(ns);
  key->push_back('\0');
  key->push_back(static_cast<char>(bson_iter_type(&id)));
  // The value occupies [d1, next_off) of the document buffer for every BSON type.
  if (id.next_off >= id.d1) {
    key->append(reinterpret_cast<const char*>(id.raw + id.d1), id.next_off - id.d1);
  }
}

DocumentTracker::Shard& DocumentTracker::shard_for(std::string_view key) {
  return shards_[std::hash<std::string_view>{}(key) % kShards];
}

void DocumentTracker::evict(Shard& shard) {
  if (shard.lru.empty()) return;
  shard.index.erase(shard.lru.back().key);
  shard.lru.pop_back();
}

void DocumentTracker::record(std::string_view key, std::string_view path, uint32_t length) {
  Shard& s = shard_for(key);
  std::lock_guard lock(s.mutex);
  if (s.capacity == 0) return;
  auto it = s.index.find(key);
  if (it == s.index.end()) {
    if (s.lru.size() >= s.capacity) evict(s);
    s.lru.push_front(Entry{std::string(key), {}});
    it = s.index.emplace(s.lru.front().key, s.lru.begin()).first;
  } else {
    s.lru.splice(s.lru.begin(), s.lru, it->second);
  }
  auto& lengths = it->second->lengths;
  for (auto& [p, l] : lengths) {
    if (p == path) {
      l = length;
      return;
    }
  }
  if (lengths.size() < max_fields_) lengths.emplace_back(std::string(path), length);
}

std::optional<uint32_t> DocumentTracker::grow(std::string_view key, std::string_view path,
                                              uint32_t elements, std::optional<uint32_t> cap) {
  Shard& s = shard_for(key);
  std::lock_guard lock(s.mutex);
  auto it = s.index.find(key);
  if (it == s.index.end()) return std::nullopt;
  s.lru.splice(s.lru.begin(), s.lru, it->second);
  for (auto& [p, l] : it->second->lengths) {
    if (p == path) {
      uint64_t grown = static_cast<uint64_t>(l) + elements;
      if (cap) grown = std::min<uint64_t>(grown, *cap);
      l = static_cast<uint32_t>(std::min<uint64_t>(grown, UINT32_MAX));
      return l;
    }
  }
  return std::nullopt;
}

void DocumentTracker::forget(std::string_view key) {
  Shard& s = shard_for(key);
  std::lock_guard lock(s.mutex);
  auto it = s.index.find(key);
  if (it == s.index.end()) return;
  auto node = it->second;
  s.index.erase(it);
  s.lru.erase(node);
}

size_t DocumentTracker::size() const {
  size_t n = 0;
  for (const Shard& s : shards_) {
    std::lock_guard lock(s.mutex);
    n += s.lru.size();
  }
  return n;
}

}  // namespace docguard::rules
