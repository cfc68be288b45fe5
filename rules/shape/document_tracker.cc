#include "docguard/rules/document_tracker.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "docguard/base/hash.h"
#include "docguard/base/key_parts.h"
#include "docguard/base/short_equal.h"
#include "docguard/codec/bson_view.h"

namespace docguard::rules {

namespace {

// A slot: the hash's upper 32 bits (its home position and a tag), and the entry index + 1.
constexpr uint64_t slot_value(uint64_t hash, uint32_t index) {
  return (hash & 0xffffffff00000000ULL) | (static_cast<uint64_t>(index) + 1);
}
constexpr uint32_t index_of(uint64_t slot) { return static_cast<uint32_t>(slot) - 1; }
constexpr size_t home_of(uint64_t slot_or_hash, size_t mask) {
  return static_cast<size_t>(slot_or_hash >> 32) & mask;
}

}  // namespace

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
    while (s.live > s.capacity) evict(s);
    if (s.capacity == 0) {
      // Tracking is off: give the memory back.
      std::vector<Entry>().swap(s.entries);
      s.slots = {};
      s.head = s.tail = s.free = kNone;
    }
  }
}

namespace {

// The database and the collection as key parts (base/key_parts.h: db "a.b" with collection "c"
// is not db "a" with collection "b.c"), then the _id's BSON type byte and its raw value bytes:
// equal _id values give equal keys. Written in place: the key buffer is reused, so mostly no
// resize moves anything.
void write_key(std::string_view db, std::string_view coll, uint8_t type, std::string_view value,
               std::string* key) {
  const size_t at_type = base::key_part_size(db) + base::key_part_size(coll);
  key->resize(at_type + 1 + value.size());
  char* out = base::write_key_part(key->data(), db);
  out = base::write_key_part(out, coll);
  *out = static_cast<char>(type);
  if (!value.empty()) std::memcpy(out + 1, value.data(), value.size());
}

}  // namespace

void DocumentTracker::make_key(std::string_view db, std::string_view coll,
                               const codec::BsonElements& id, std::string* key) {
  write_key(db, coll, id.type, {reinterpret_cast<const char*>(id.value), id.value_size}, key);
}

uint64_t DocumentTracker::hash_of(std::string_view key) {
  // The shard comes from the top bits (hash % kShards would leave every key of a shard with
  // the same low bits); slots use bits 32 and up, so keys of one shard still spread.
  static_assert(kShards == 8);
  const uint64_t h = base::hash_bytes(key);
  return (h >> 61) | (h << 3);  // shard in the low 3 bits, the rest rotated up intact
}

uint32_t DocumentTracker::find(const Shard& s, uint64_t hash, std::string_view key,
                               size_t* slot_out) {
  if (s.slots.empty()) return kNone;
  const size_t mask = s.slots.size() - 1;
  const uint64_t tag = hash & 0xffffffff00000000ULL;
  for (size_t i = home_of(hash, mask);; i = (i + 1) & mask) {
    const uint64_t v = s.slots[i];
    if (v == 0) return kNone;
    if ((v & 0xffffffff00000000ULL) != tag) continue;
    const Entry& e = s.entries[index_of(v)];
    if (e.hash == hash && base::same_text(e.key, key)) {
      if (slot_out != nullptr) *slot_out = i;
      return index_of(v);
    }
  }
}

void DocumentTracker::grow_slots(Shard& s) {
  std::vector<uint64_t> old = std::move(s.slots);
  s.slots.assign(std::max<size_t>(16, old.size() * 2), 0);
  const size_t mask = s.slots.size() - 1;
  for (uint64_t v : old) {
    if (v == 0) continue;
    size_t i = home_of(v, mask);
    while (s.slots[i] != 0) i = (i + 1) & mask;
    s.slots[i] = v;
  }
}

void DocumentTracker::insert_slot(Shard& s, uint64_t hash, uint32_t index) {
  if ((static_cast<size_t>(s.live) + 1) * 2 > s.slots.size()) grow_slots(s);
  const size_t mask = s.slots.size() - 1;
  size_t i = home_of(hash, mask);
  while (s.slots[i] != 0) i = (i + 1) & mask;
  s.slots[i] = slot_value(hash, index);
}

void DocumentTracker::erase_slot(Shard& s, size_t slot) {
  // Backward shift: later members of the probe run move up so that no lookup stops early at
  // the hole.
  const size_t mask = s.slots.size() - 1;
  size_t hole = slot;
  for (size_t j = (slot + 1) & mask; s.slots[j] != 0; j = (j + 1) & mask) {
    const size_t home = home_of(s.slots[j], mask);
    // Movable when the hole lies cyclically within [home, j).
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      s.slots[hole] = s.slots[j];
      hole = j;
    }
  }
  s.slots[hole] = 0;
}

void DocumentTracker::unlink(Shard& s, uint32_t index) {
  Entry& e = s.entries[index];
  if (e.prev != kNone) s.entries[e.prev].next = e.next;
  if (e.next != kNone) s.entries[e.next].prev = e.prev;
  if (s.head == index) s.head = e.next;
  if (s.tail == index) s.tail = e.prev;
  e.prev = e.next = kNone;
}

void DocumentTracker::push_front(Shard& s, uint32_t index) {
  Entry& e = s.entries[index];
  e.prev = kNone;
  e.next = s.head;
  if (s.head != kNone) s.entries[s.head].prev = index;
  s.head = index;
  if (s.tail == kNone) s.tail = index;
}

void DocumentTracker::touch(Shard& s, uint32_t index) {
  if (s.head == index) return;
  unlink(s, index);
  push_front(s, index);
}

void DocumentTracker::release(Shard& s, uint32_t index) {
  unlink(s, index);
  Entry& e = s.entries[index];
  e.used_lengths = 0;  // the strings keep their storage for the next document
  e.next = s.free;
  s.free = index;
  --s.live;
}

void DocumentTracker::evict(Shard& s) {
  if (s.tail == kNone) return;
  const uint32_t index = s.tail;
  const uint64_t hash = s.entries[index].hash;
  const size_t mask = s.slots.size() - 1;
  size_t i = home_of(hash, mask);
  while (s.slots[i] != slot_value(hash, index)) i = (i + 1) & mask;
  erase_slot(s, i);
  release(s, index);
}

void DocumentTracker::record(std::string_view key, std::string_view path, uint32_t length,
                             bool read_from_store, double now, uint32_t document_bytes) {
  const uint64_t hash = hash_of(key);
  Shard& s = shard_for(hash);
  std::lock_guard lock(s.mutex);
  if (s.capacity == 0) return;
  record_locked(s, hash, key, path, length, read_from_store, now, document_bytes);
}

void DocumentTracker::record_locked(Shard& s, uint64_t hash, std::string_view key,
                                    std::string_view path, uint32_t length, bool read_from_store,
                                    double now, uint32_t document_bytes) {
  uint32_t index = find(s, hash, key, nullptr);
  if (index == kNone) {
    if (s.live >= s.capacity) evict(s);
    if (s.free != kNone) {
      index = s.free;
      s.free = s.entries[index].next;
    } else {
      index = static_cast<uint32_t>(s.entries.size());
      s.entries.emplace_back();
    }
    Entry& e = s.entries[index];
    e.hash = hash;
    e.key.assign(key);
    e.used_lengths = 0;
    e.read_from_store = false;
    e.document_bytes = 0;
    insert_slot(s, hash, index);
    ++s.live;
    push_front(s, index);
  } else {
    touch(s, index);
  }
  Entry& e = s.entries[index];
  e.read_from_store = e.read_from_store || read_from_store;
  e.recorded_at = now;
  if (document_bytes > 0) e.document_bytes = document_bytes;
  for (size_t i = 0; i < e.used_lengths; ++i) {
    if (base::same_text(e.lengths[i].first, path)) {
      e.lengths[i].second = length;
      if (i < e.growth.size() && e.growth[i] != nullptr && e.growth[i]->series.size() > 0) {
        GrowthSeries& series = e.growth[i]->series;
        if (now < 0) {
          *e.growth[i] = Growth{};  // untimed: the history cannot go on
        } else if (read_from_store) {
          series.observe(now, length);
        } else {
          series.restart(now, length);  // written whole: a new history
          e.growth[i]->told = false;
        }
      }
      return;
    }
  }
  if (e.used_lengths >= max_fields_) return;
  // The slot's growth state, if any, was another path's.
  if (e.used_lengths < e.growth.size() && e.growth[e.used_lengths] != nullptr) {
    *e.growth[e.used_lengths] = Growth{};
  }
  if (e.used_lengths < e.lengths.size()) {
    e.lengths[e.used_lengths].first.assign(path);
    e.lengths[e.used_lengths].second = length;
  } else {
    e.lengths.emplace_back(std::string(path), length);
  }
  ++e.used_lengths;
}

std::optional<DocumentTracker::Grown> DocumentTracker::grow(std::string_view key,
                                                            std::string_view path,
                                                            uint32_t elements,
                                                            std::optional<uint32_t> cap,
                                                            Push* push) {
  const uint64_t hash = hash_of(key);
  Shard& s = shard_for(hash);
  std::lock_guard lock(s.mutex);
  const uint32_t index = find(s, hash, key, nullptr);
  if (index == kNone) return std::nullopt;
  touch(s, index);
  Entry& e = s.entries[index];
  for (size_t i = 0; i < e.used_lengths; ++i) {
    auto& [p, l] = e.lengths[i];
    if (p == path) {
      const uint32_t before = l;
      uint64_t grown = static_cast<uint64_t>(l) + elements;
      if (cap) grown = std::min<uint64_t>(grown, *cap);
      l = static_cast<uint32_t>(std::min<uint64_t>(grown, UINT32_MAX));
      if (push != nullptr) note_push(e, i, before, l, elements, cap, *push);
      return Grown{l, e.read_from_store};
    }
  }
  return std::nullopt;
}

std::optional<DocumentTracker::Grown> DocumentTracker::would_grow(
    std::string_view key, std::string_view path, uint32_t elements,
    std::optional<uint32_t> cap) const {
  const uint64_t hash = hash_of(key);
  const Shard& s = shards_[hash % kShards];
  std::lock_guard lock(s.mutex);
  const uint32_t index = find(s, hash, key, nullptr);
  if (index == kNone) return std::nullopt;
  const Entry& e = s.entries[index];
  for (size_t i = 0; i < e.used_lengths; ++i) {
    const auto& [p, l] = e.lengths[i];
    if (p == path) {
      uint64_t grown = static_cast<uint64_t>(l) + elements;
      if (cap) grown = std::min<uint64_t>(grown, *cap);
      return Grown{static_cast<uint32_t>(std::min<uint64_t>(grown, UINT32_MAX)), e.read_from_store};
    }
  }
  return std::nullopt;
}

void DocumentTracker::forget(std::string_view key) {
  const uint64_t hash = hash_of(key);
  Shard& s = shard_for(hash);
  std::lock_guard lock(s.mutex);
  size_t slot = 0;
  const uint32_t index = find(s, hash, key, &slot);
  if (index == kNone) return;
  erase_slot(s, slot);
  release(s, index);
}

size_t DocumentTracker::size() const {
  size_t n = 0;
  for (const Shard& s : shards_) {
    std::lock_guard lock(s.mutex);
    n += s.live;
  }
  return n;
}

}  // namespace docguard::rules
