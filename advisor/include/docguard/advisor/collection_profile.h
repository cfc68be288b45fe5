// What the advisor knows about one collection, built one document at a time. The offline scan
// feeds it every document of a dump; the live phase will feed it the documents of inserts (and
// the indexes from createIndexes/listIndexes traffic), so nothing here assumes a dump.
// Memory is bounded by AdvisorSettings (field paths, array paths, distinct-value sets); what does
// not fit is counted in `overflow_paths`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "docguard/advisor/dump_reader.h"
#include "docguard/advisor/log_histogram.h"
#include "docguard/advisor/settings.h"
#include "docguard/codec/bson_view.h"

namespace docguard::advisor {

// A measured value and the _id of the document it came from (shell notation, e.g. 42, "a",
// ObjectId('...')).
struct DocumentRef {
  uint64_t value = 0;
  std::string id;
  // A hash of the document's raw _id element (0: none): tells a document already on a list
  // without formatting its _id again.
  uint64_t id_key = 0;
};

struct ArrayStats {
  LogHistogram lengths;              // one value per array occurrence
  uint32_t element_types = 0;        // bson_type_bit mask of the elements
  std::vector<DocumentRef> longest;  // the longest few, longest first
};

// Counts distinct values of one field exactly up to a cap, then only says "more than the cap".
class DistinctCounter {
 public:
  explicit DistinctCounter(uint32_t cap) : cap_(cap) {}
  void add(uint64_t hash);
  uint64_t count() const { return count_; }
  bool saturated() const { return saturated_; }

 private:
  uint32_t cap_;
  uint64_t count_ = 0;
  bool saturated_ = false;
  std::vector<uint64_t> table_;  // open addressing, 0 = empty; freed once saturated
};

struct FieldStats {
  std::string path;    // dotted; array elements' fields without indices ("items.productId")
  uint32_t depth = 1;  // 1: a top-level field
  bool inside_array = false;
  bool reference = false;  // name ends in "Id" or "_id" (not _id itself)
  uint64_t occurrences = 0;
  uint64_t documents = 0;  // documents holding the path at least once
  uint64_t last_document = 0;
  uint32_t types = 0;  // bson_type_bit mask
  uint64_t max_value_bytes = 0;
  uint64_t total_value_bytes = 0;
  int64_t min_date = INT64_MAX;  // milliseconds since the epoch, for date values
  int64_t max_date = INT64_MIN;
  int32_t array = -1;  // index into arrays(), for array-valued paths that got one
  std::unique_ptr<DistinctCounter> distinct;  // top-level scalar fields only, while room lasts
};

class CollectionProfile {
 public:
  CollectionProfile(std::string db, std::string collection, const AdvisorSettings& settings);

  // Walks one BSON document (bounds-checked: a corrupt one is a bad-input error).
  base::Expected<void> add_document(const uint8_t* data, uint32_t size);
  void set_metadata(const CollectionMetadata& metadata);

  const std::string& db() const { return db_; }
  const std::string& collection() const { return collection_; }
  std::string ns() const { return db_ + "." + collection_; }
  uint64_t documents() const { return sizes_.count(); }
  const LogHistogram& sizes() const { return sizes_; }
  const std::vector<DocumentRef>& largest() const { return largest_; }
  uint32_t max_depth() const { return max_depth_.value; }
  const DocumentRef& deepest() const { return max_depth_; }
  const std::vector<FieldStats>& fields() const { return fields_; }
  const std::vector<ArrayStats>& arrays() const { return arrays_; }
  uint64_t overflow_paths() const { return overflow_paths_; }
  const CollectionMetadata& metadata() const { return metadata_; }
  const FieldStats* field(std::string_view path) const;

 private:
  struct Walk;
  bool walk_document(Walk& walk, const codec::BsonView& container, uint64_t parent_hash,
                     int32_t parent_slot, uint32_t depth, bool inside_array);
  bool walk_array(Walk& walk, const codec::BsonView& container, uint64_t hash, int32_t slot,
                  uint32_t depth);
  // The path's index in fields_ (-1: a path that did not fit), or kNewPath when it was never
  // seen; new_slot then adds it.
  static constexpr int32_t kNewPath = -2;
  int32_t known_slot(uint64_t hash) const {
    const size_t mask = slot_hashes_.size() - 1;
    for (size_t i = hash & mask; slot_hashes_[i] != 0; i = (i + 1) & mask) {
      if (slot_hashes_[i] == hash) return slot_index_[i];
    }
    return kNewPath;
  }
  int32_t new_slot(uint64_t hash, int32_t parent_slot, const uint8_t* key, size_t key_length,
                   uint32_t depth, bool inside_array);
  void note_longest(std::vector<DocumentRef>& list, uint64_t value, const std::string& id,
                    uint64_t id_key);

  std::string db_, collection_;
  AdvisorSettings settings_;
  CollectionMetadata metadata_;
  LogHistogram sizes_;
  std::vector<DocumentRef> largest_;
  DocumentRef max_depth_;
  std::vector<FieldStats> fields_;
  std::vector<ArrayStats> arrays_;
  std::vector<uint64_t> slot_hashes_;  // open addressing over path hashes, 0 = empty
  std::vector<int32_t> slot_index_;
  uint32_t distinct_fields_ = 0;
  uint64_t overflow_paths_ = 0;
  // Arrays that may belong among the longest of this document, resolved once its _id is known.
  std::vector<std::pair<int32_t, uint64_t>> pending_longest_;
};

}  // namespace docguard::advisor
