// The hot path of the scan: one bounds-checked pass over each document's bytes, no allocation
// once a collection's paths are known. Field paths are found by a 64-bit hash chained from the
// parent's hash, so a path's string is only built the first time it is seen.
// The walk is its own rather than codec::BsonElements: it hashes each key in the same loop that
// finds the key's end (BsonElements would take a second pass over every key), and what it
// refuses as corrupt is what `docguard scan` has always refused (an embedded document must end
// in its NUL; a boolean byte is not checked), which the element walk of the wire path does not
// match exactly.
#include "docguard/advisor/collection_profile.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "docguard/advisor/bson_types.h"
#include "docguard/advisor/document_id.h"
#include "docguard/base/hash.h"
#include "docguard/codec/bson_elements.h"

namespace docguard::advisor {
namespace {

constexpr uint64_t kRootHash = 0xcbf29ce484222325ULL;  // any constant: the root's path hash
constexpr uint32_t kMaxWalkDepth = 200;  // the wire's own limit; deeper input is not walked
constexpr size_t kLongestKept = 3;

uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h | 1;  // never 0, the empty marker
}

bool is_reference_name(const uint8_t* key, size_t n) {
  if (n > 3 && key[n - 3] == '_' && key[n - 2] == 'i' && key[n - 1] == 'd') return true;
  return n > 2 && key[n - 2] == 'I' && key[n - 1] == 'd';
}

// A value's hash for the distinct counter: of its first 64 bytes and its length, eight bytes
// per step (never 0, the counter's empty marker).
uint64_t value_hash(const uint8_t* p, size_t n) {
  const std::string_view head(reinterpret_cast<const char*>(p), std::min<size_t>(n, 64));
  return mix(base::hash_bytes(head) ^ n);
}

}  // namespace

void DistinctCounter::add(uint64_t hash) {
  if (saturated_) return;
  if (table_.empty()) table_.assign(std::bit_ceil(size_t{cap_} * 2), 0);
  const size_t mask = table_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    if (table_[i] == hash) return;
    if (table_[i] == 0) {
      table_[i] = hash;
      if (++count_ > cap_) {
        saturated_ = true;
        std::vector<uint64_t>().swap(table_);
      }
      return;
    }
  }
}

struct CollectionProfile::Walk {
  uint64_t document_number;
  uint32_t max_depth;
};

CollectionProfile::CollectionProfile(std::string db, std::string collection,
                                     const AdvisorSettings& settings)
    : db_(std::move(db)), collection_(std::move(collection)), settings_(settings) {
  const size_t table = std::bit_ceil(size_t{settings_.max_field_paths} * 2 + 2);
  slot_hashes_.assign(table, 0);
  slot_index_.assign(table, -1);
  metadata_.db = db_;
  metadata_.collection = collection_;
}

void CollectionProfile::set_metadata(const CollectionMetadata& metadata) { metadata_ = metadata; }

const FieldStats* CollectionProfile::field(std::string_view path) const {
  for (const FieldStats& f : fields_) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

int32_t CollectionProfile::new_slot(uint64_t hash, int32_t parent_slot, const uint8_t* key,
                                    size_t key_length, uint32_t depth, bool inside_array) {
  const size_t mask = slot_hashes_.size() - 1;
  size_t i = hash & mask;
  while (slot_hashes_[i] != 0) i = (i + 1) & mask;
  // A new path. Children of a path that did not fit cannot be named either.
  if (fields_.size() >= settings_.max_field_paths || (depth > 1 && parent_slot < 0)) {
    ++overflow_paths_;
    return -1;
  }
  FieldStats field;
  if (parent_slot >= 0) field.path = fields_[parent_slot].path + ".";
  field.path.append(reinterpret_cast<const char*>(key), key_length);
  field.depth = depth;
  field.inside_array = inside_array;
  field.reference = is_reference_name(key, key_length);
  slot_hashes_[i] = hash;
  slot_index_[i] = static_cast<int32_t>(fields_.size());
  fields_.push_back(std::move(field));
  return slot_index_[i];
}

bool CollectionProfile::walk_array(Walk& walk, const codec::BsonView& container, uint64_t hash,
                                   int32_t slot, uint32_t depth) {
  if (depth > walk.max_depth) walk.max_depth = depth;
  // An index, not a pointer: nested arrays may grow arrays_ while this one is walked.
  int32_t array = -1;
  if (slot >= 0) {
    FieldStats& field = fields_[slot];
    if (field.array < 0 && arrays_.size() < settings_.max_array_paths) {
      field.array = static_cast<int32_t>(arrays_.size());
      arrays_.emplace_back();
    }
    array = field.array;
  }
  uint64_t length = 0;
  codec::BsonElements e(container);
  while (e.next()) {
    ++length;
    if (array >= 0) arrays_[array].element_types |= bson_type_bit(e.type);
    if (depth < kMaxWalkDepth) {
      // Elements' fields share the array's path: "items.productId" for every element.
      if (e.holds_document() && !walk_document(walk, e.container(), hash, slot, depth + 1, true)) {
        return false;
      }
      if (e.holds_array() && !walk_array(walk, e.container(), hash, slot, depth + 1)) {
        return false;
      }
    }
  }
  if (e.malformed()) return false;
  if (array >= 0) {
    ArrayStats& stats = arrays_[array];
    stats.lengths.add(length);
    if (stats.longest.size() < kLongestKept || length > stats.longest.back().value) {
      pending_longest_.emplace_back(array, length);
    }
  }
  return true;
}

bool CollectionProfile::walk_document(Walk& walk, const codec::BsonView& container,
                                      uint64_t parent_hash, int32_t parent_slot, uint32_t depth,
                                      bool inside_array) {
  if (depth > walk.max_depth) walk.max_depth = depth;
  codec::BsonElements e(container);
  while (e.next()) {
    const uint8_t type = e.type;
    const std::string_view key = e.key;
    const uint64_t h = mix(base::hash_bytes(key, parent_hash ^ 0x2e));
    const uint8_t* p = e.value;
    const uint32_t size = e.value_size;
    // A known path (nearly every one, once a collection's documents were seen) is found here;
    // a new one is added out of line.
    int32_t slot = known_slot(h);
    if (slot == kNewPath) {
      slot = new_slot(h, parent_slot, reinterpret_cast<const uint8_t*>(key.data()), key.size(),
                      depth, inside_array);
    }
    if (slot >= 0) {
      FieldStats& field = fields_[slot];
      ++field.occurrences;
      if (field.last_document != walk.document_number) {
        field.last_document = walk.document_number;
        ++field.documents;
      }
      field.types |= bson_type_bit(type);
      const uint64_t bytes = uint64_t{size} + key.size() + 2;
      field.total_value_bytes += bytes;
      if (bytes > field.max_value_bytes) field.max_value_bytes = bytes;
      if (type == BSON_TYPE_DATE_TIME) {
        int64_t millis;
        std::memcpy(&millis, p, 8);
        field.min_date = std::min(field.min_date, millis);
        field.max_date = std::max(field.max_date, millis);
      }
      if (depth == 1 && (type == BSON_TYPE_UTF8 || type == BSON_TYPE_OID ||
                         type == BSON_TYPE_INT32 || type == BSON_TYPE_INT64)) {
        if (!field.distinct && distinct_fields_ < settings_.max_distinct_tracked_fields &&
            key != "_id") {
          field.distinct = std::make_unique<DistinctCounter>(settings_.distinct_values_cap);
          ++distinct_fields_;
        }
        if (field.distinct && !field.distinct->saturated()) {
          field.distinct->add(value_hash(p, size) ^ type);
        }
      }
    }
    if (depth < kMaxWalkDepth) {
      if (e.holds_document() &&
          !walk_document(walk, e.container(), h, slot, depth + 1, inside_array)) {
        return false;
      }
      if (e.holds_array() && !walk_array(walk, e.container(), h, slot, depth + 1)) {
        return false;
      }
    }
  }
  return !e.malformed();
}

namespace {

// The hash DocumentRef::id_key holds: of the _id element's bytes (type, name, value), never 0.
uint64_t id_key_of(const uint8_t* data, uint32_t size) {
  codec::BsonElements e(data, size);
  return e.find("_id") ? base::hash_bytes(e.element_bytes()) | 1 : 0;
}

// Whether noting `value` for the document `id_key` would change `list`: it would enter, or it
// raises the value the list holds for that document. A document the list already holds at
// this value or more changes nothing (a document replaced or sampled again; two _ids whose
// hashes collide count as one, which costs at most one entry of a sample list).
bool changes_longest(const std::vector<DocumentRef>& list, uint64_t value, uint64_t id_key,
                     size_t kept) {
  if (list.size() >= kept && value <= list.back().value) return false;
  if (id_key == 0) return true;
  for (const DocumentRef& known : list) {
    if (known.id_key == id_key) return value > known.value;
  }
  return true;
}

}  // namespace

void CollectionProfile::note_longest(std::vector<DocumentRef>& list, uint64_t value,
                                     const std::string& id, uint64_t id_key) {
  if (list.size() >= kLongestKept && value <= list.back().value) return;
  for (DocumentRef& known : list) {  // one document, several arrays at this path
    if (known.id != id) continue;
    known.value = std::max(known.value, value);
    std::stable_sort(list.begin(), list.end(),
                     [](const DocumentRef& a, const DocumentRef& b) { return a.value > b.value; });
    return;
  }
  list.push_back(DocumentRef{value, id, id_key});
  std::stable_sort(list.begin(), list.end(),
                   [](const DocumentRef& a, const DocumentRef& b) { return a.value > b.value; });
  if (list.size() > kLongestKept) list.pop_back();
}

base::Expected<void> CollectionProfile::add_document(const uint8_t* data, uint32_t size) {
  if (size < 5 || static_cast<uint32_t>(codec::load_le32(data)) != size || data[size - 1] != 0) {
    return base::bad_input("corrupt document: length prefix does not match its framing");
  }
  Walk walk{sizes_.count() + 1, 1};
  pending_longest_.clear();
  if (!walk_document(walk, codec::BsonView{data, size}, kRootHash, -1, 1, false)) {
    return base::bad_input(
        "corrupt document: an element runs past its document's end or has an unknown type");
  }
  sizes_.add(size);
  const bool deepest = walk.max_depth > max_depth_.value;
  bool largest = largest_.size() < kLongestKept || size > largest_.back().value;
  if (!largest && !deepest && pending_longest_.empty()) return {};
  // Only a document that changes a list has its _id formatted.
  const uint64_t id_key = id_key_of(data, size);
  largest = largest && changes_longest(largest_, size, id_key, kLongestKept);
  std::erase_if(pending_longest_, [&](const std::pair<int32_t, uint64_t>& p) {
    return !changes_longest(arrays_[p.first].longest, p.second, id_key, kLongestKept);
  });
  if (!largest && !deepest && pending_longest_.empty()) return {};
  const std::string id = document_id_text(data, size);
  if (largest) note_longest(largest_, size, id, id_key);
  if (deepest) max_depth_ = DocumentRef{walk.max_depth, id, id_key};
  for (const auto& [array, length] : pending_longest_) {
    note_longest(arrays_[array].longest, length, id, id_key);
  }
  return {};
}

}  // namespace docguard::advisor
