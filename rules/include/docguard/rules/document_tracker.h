// Remembers array lengths of recently written or read documents, keyed by namespace and _id,
// so that a `$push` to a known document can be judged against the array's bound: a single
// push looks harmless, the thousandth one is not. Bounded LRU, sharded to spread lock traffic.
#pragma once

#include <bson/bson.h>

#include <array>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace docguard::rules {

class DocumentTracker {
 public:
  // capacity: documents remembered in total; max_fields: array paths remembered per document.
  DocumentTracker(uint32_t capacity, uint32_t max_fields);

  void set_limits(uint32_t capacity, uint32_t max_fields);

  // Builds the key for (namespace, _id value); the iterator points at the _id element.
  static void make_key(std::string_view ns, const bson_iter_t& id, std::string* key);

  // Records the length of `path` in a document (insert, replacement, $set, sampled read).
  void record(std::string_view key, std::string_view path, uint32_t length);
  // Adds `elements` to the known length of `path` (capped at `cap` when the push has $slice)
  // and returns the new length, or nullopt when the document or path is not known.
  std::optional<uint32_t> grow(std::string_view key, std::string_view path, uint32_t elements,
                               std::optional<uint32_t> cap);
  // Forgets a document (deleted, or replaced without the array).
  void forget(std::string_view key);
  size_t size() const;

 private:
  struct Entry {
    std::string key;
    std::vector<std::pair<std::string, uint32_t>> lengths;
  };
  struct Shard {
    mutable std::mutex mutex;
    std::list<Entry> lru;  // most recent first
    std::unordered_map<std::string_view, std::list<Entry>::iterator> index;
    uint32_t capacity = 0;
  };
  static constexpr size_t kShards = 8;
  Shard& shard_for(std::string_view key);
  void evict(Shard& shard);

  std::array<Shard, kShards> shards_;
  uint32_t max_fields_;
};

}  // namespace docguard::rules
