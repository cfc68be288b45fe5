// Remembers array lengths of recently written or read documents, keyed by namespace and _id,
// so that a `$push` to a known document can be judged against the array's bound: a single
// push looks harmless, the thousandth one is not. Bounded LRU, sharded to spread lock traffic.
#pragma once

#include <bson/bson.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "docguard/base/spin_lock.h"
#include "docguard/codec/bson_elements.h"
#include "docguard/rules/growth_forecast.h"

namespace docguard::rules {

class DocumentTracker {
 public:
  // capacity: documents remembered in total; max_fields: array paths remembered per document.
  DocumentTracker(uint32_t capacity, uint32_t max_fields);

  void set_limits(uint32_t capacity, uint32_t max_fields);

  // Builds the key for (namespace db.coll, _id value) from the _id element.
  static void make_key(std::string_view db, std::string_view coll, const codec::BsonElements& id,
                       std::string* key);

  // Records the length of `path` in a document (insert, replacement, $set, sampled read).
  // `read_from_store`: measured on the document as the database returned it (a client's read,
  // docguard's own introspection), not on what a client wrote. `now` (steady seconds, < 0:
  // unknown) times the observation for the growth forecast: a length written whole starts the
  // path's growth history again, a length read from the store is one more observation of it.
  // `document_bytes`: the whole document's size when it was measured (0: not a whole document).
  void record(std::string_view key, std::string_view path, uint32_t length,
              bool read_from_store = false, double now = -1, uint32_t document_bytes = 0);

  // A document's array whose forecast just fell under the horizon (told once per history).
  struct EnteredHorizon {
    ForecastLimit limit = ForecastLimit::kArrayLength;
    double eta_seconds = 0;
    double rate = 0;  // elements per second
    double bound = 0;
  };
  // What the growth forecast needs of a push besides its elements, and what it found.
  struct Push {
    double now = 0;      // steady seconds
    uint32_t bytes = 0;  // bytes the pushed elements add (0: not measured)
    // The smallest array length and document size bounds in force (infinite or 0: none).
    double array_bound = 0;
    double document_bound = 0;
    double horizon = 0;  // seconds; a document whose forecast falls under it is told once
    std::optional<EnteredHorizon> entered = std::nullopt;  // out: this push took it under
  };
  struct Grown {
    uint32_t length = 0;
    // The document's lengths were read from the database at least once. Growth added up from
    // forwarded writes alone only ever goes up ($pull, $pop and writes that bypass docguard are
    // not seen), so it is an estimate; a read of the stored document is a fact.
    bool read_from_store = false;
    friend bool operator==(const Grown& g, uint32_t length) { return g.length == length; }
  };
  // Adds `elements` to the known length of `path` (capped at `cap` when the push has $slice)
  // and returns the new length, or nullopt when the document or path is not known. With
  // `push`, the path's growth history takes the new length (a push with $slice marks the
  // array as kept bounded instead).
  std::optional<Grown> grow(std::string_view key, std::string_view path, uint32_t elements,
                            std::optional<uint32_t> cap, Push* push = nullptr);
  // Takes back a grow() whose push was refused: the push never happens.
  void undo_grow(std::string_view key, std::string_view path, uint32_t elements, uint32_t bytes);
  // Every tracked array with a growth rate at `now`, for forecasts (walks the whole tracker:
  // for scrapes and reports, not the message path).
  std::vector<DocumentGrowth> growing_arrays(double now) const;
  // What grow() would return, changing nothing (not even the LRU order): for judging candidate
  // rules on a write the real rules judge too.
  std::optional<Grown> would_grow(std::string_view key, std::string_view path, uint32_t elements,
                                  std::optional<uint32_t> cap) const;
  // Forgets a document (deleted, or replaced without the array).
  void forget(std::string_view key);
  size_t size() const;

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  // Entries live in one vector per shard and are reused in place once evicted or forgotten, so
  // a full tracker takes in a new document without allocating: the key and path strings keep
  // their capacity. (A std::list node plus a hash node per document cost four allocations per
  // insert, and a cache miss per pointer followed.)
  // A pushed array's growth history and what its forecast is judged against. Made at the
  // path's first push without $slice, so documents that are only written whole cost nothing.
  struct Growth {
    GrowthSeries series;
    float bytes_per_element = 0;  // smoothed over the pushes' measured sizes
    uint32_t array_bound = 0;     // as at the last push (the pushing connection's rules)
    uint32_t document_bound = 0;
    bool told = false;      // entered the horizon and was reported (once per history)
    double next_check = 0;  // steady seconds: the horizon is checked at most once a second
  };
  struct Entry {
    uint64_t hash = 0;
    uint32_t prev = kNone, next = kNone;  // LRU order: prev is more recent; free list: next
    std::string key;
    std::vector<std::pair<std::string, uint32_t>> lengths;
    // growth[i] belongs to lengths[i] (null until pushed to; shorter than lengths when the
    // later paths were never pushed to). Reset when its slot takes another path.
    std::vector<std::unique_ptr<Growth>> growth;
    size_t used_lengths = 0;  // lengths[0, used_lengths) are live; the rest keep their storage
    bool read_from_store = false;
    double recorded_at = -1;      // steady seconds of the last record() (-1: unknown)
    uint32_t document_bytes = 0;  // the last whole size measured plus pushed bytes (0: unknown)
  };
  // Open addressing, linear probing, no tombstones (backward-shift deletion). A slot holds the
  // hash's upper 32 bits and the entry index + 1 (0: empty), so a probe compares the full key
  // only when the tags agree.
  struct Shard {
    mutable base::SpinLock mutex;  // taken on every insert or push of a tracked array
    std::vector<Entry> entries;
    std::vector<uint64_t> slots;  // size is a power of two, at most half full
    uint32_t head = kNone, tail = kNone, free = kNone;
    uint32_t live = 0;
    uint32_t capacity = 0;
  };
  static constexpr size_t kShards = 8;

  static uint64_t hash_of(std::string_view key);
  Shard& shard_for(uint64_t hash) { return shards_[hash % kShards]; }
  // The entry index of `key`, or kNone; *slot_out gets the slot it sits in (if found).
  static uint32_t find(const Shard& s, uint64_t hash, std::string_view key, size_t* slot_out);
  static void insert_slot(Shard& s, uint64_t hash, uint32_t index);
  static void erase_slot(Shard& s, size_t slot);
  static void grow_slots(Shard& s);
  static void unlink(Shard& s, uint32_t index);
  static void push_front(Shard& s, uint32_t index);
  static void touch(Shard& s, uint32_t index);
  // Removes the entry (its slot already erased) and puts it on the free list.
  static void release(Shard& s, uint32_t index);
  static void evict(Shard& s);
  void record_locked(Shard& s, uint64_t hash, std::string_view key, std::string_view path,
                     uint32_t length, bool read_from_store, double now, uint32_t document_bytes);
  // The growth state of e.lengths[i], made (and seeded with the length known before this push)
  // when missing.
  static Growth& growth_of(Entry& e, size_t i, double now);
  static void note_push(Entry& e, size_t i, uint32_t before, uint32_t after, uint32_t elements,
                        std::optional<uint32_t> cap, Push& push);

  std::array<Shard, kShards> shards_;
  uint32_t max_fields_;
};

}  // namespace docguard::rules
