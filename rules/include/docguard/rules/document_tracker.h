// Remembers array lengths of recently written or read documents, keyed by namespace and _id,
// so that a `$push` to a known document can be judged against the array's bound: a single
// push looks harmless, the thousandth one is not. Bounded LRU, sharded to spread lock traffic.
#pragma once

#include <bson/bson.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace docguard::rules {

class DocumentTracker {
 public:
  // capacity: documents remembered in total; max_fields: array paths remembered per document.
  DocumentTracker(uint32_t capacity, uint32_t max_fields);

  void set_limits(uint32_t capacity, uint32_t max_fields);

  // Builds the key for (namespace db.coll, _id value); the iterator points at the _id element.
  static void make_key(std::string_view db, std::string_view coll, const bson_iter_t& id,
                       std::string* key);

  // Records the length of `path` in a document (insert, replacement, $set, sampled read).
  // `read_from_store`: measured on the document as the database returned it (a client's read,
  // docguard's own introspection), not on what a client wrote.
  void record(std::string_view key, std::string_view path, uint32_t length,
              bool read_from_store = false);
  struct Grown {
    uint32_t length = 0;
    // The document's lengths were read from the database at least once. Growth added up from
    // forwarded writes alone only ever goes up ($pull, $pop and writes that bypass docguard are
    // not seen), so it is an estimate; a read of the stored document is a fact.
    bool read_from_store = false;
    friend bool operator==(const Grown& g, uint32_t length) { return g.length == length; }
  };
  // Adds `elements` to the known length of `path` (capped at `cap` when the push has $slice)
  // and returns the new length, or nullopt when the document or path is not known.
  std::optional<Grown> grow(std::string_view key, std::string_view path, uint32_t elements,
                            std::optional<uint32_t> cap);
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
  struct Entry {
    uint64_t hash = 0;
    uint32_t prev = kNone, next = kNone;  // LRU order: prev is more recent; free list: next
    std::string key;
    std::vector<std::pair<std::string, uint32_t>> lengths;
    size_t used_lengths = 0;  // lengths[0, used_lengths) are live; the rest keep their storage
    bool read_from_store = false;
  };
  // Open addressing, linear probing, no tombstones (backward-shift deletion). A slot holds the
  // hash's upper 32 bits and the entry index + 1 (0: empty), so a probe compares the full key
  // only when the tags agree.
  struct Shard {
    mutable std::mutex mutex;
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
                     uint32_t length, bool read_from_store);

  std::array<Shard, kShards> shards_;
  uint32_t max_fields_;
};

}  // namespace docguard::rules
