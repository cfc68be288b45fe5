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

namespace docguard::advisor {
namespace {

constexpr uint64_t kFnvPrime = 0x100000001b3ULL;
constexpr uint64_t kRootHash = 0xcbf29ce484222325ULL;
constexpr uint32_t kMaxWalkDepth = 200;  // the wire's own limit; deeper input is not walked
constexpr size_t kLongestKept = 3;

uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h | 1;  // never 0, the empty marker
}

int32_t read_i32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Size of an element's value from its type and length prefix (checked within [p, end) for
// the variable-size types; value_size() below checks every type).
int64_t raw_value_size(uint8_t type, const uint8_t* p, const uint8_t* end) {
  const int64_t left = end - p;
  switch (type) {
    case 0x01:
    case 0x09:
    case 0x11:
    case 0x12:
      return 8;
    case 0x07:
      return 12;
    case 0x08:
      return 1;
    case 0x10:
      return 4;
    case 0x13:
      return 16;
    case 0x06:
    case 0x0A:
    case 0xFF:
    case 0x7F:
      return 0;
    case 0x02:
    case 0x0D:
    case 0x0E: {
      if (left < 4) return -1;
      const int32_t n = read_i32(p);
      if (n < 1 || n > left - 4 || p[4 + n - 1] != 0) return -1;
      return 4 + static_cast<int64_t>(n);
    }
    case 0x03:
    case 0x04:
    case 0x0F: {
      if (left < 5) return -1;
      const int32_t n = read_i32(p);
      if (n < 5 || n > left || p[n - 1] != 0) return -1;
      return n;
    }
    case 0x05: {
      if (left < 5) return -1;
      const int32_t n = read_i32(p);
      if (n < 0 || n > left - 5) return -1;
      return 5 + static_cast<int64_t>(n);
    }
    case 0x0B: {
      const void* a = std::memchr(p, 0, static_cast<size_t>(left));
      if (!a) return -1;
      const uint8_t* q = static_cast<const uint8_t*>(a) + 1;
      const void* b = std::memchr(q, 0, static_cast<size_t>(end - q));
      if (!b) return -1;
      return static_cast<const uint8_t*>(b) + 1 - p;
    }
    case 0x0C: {
      if (left < 4) return -1;
      const int32_t n = read_i32(p);
      if (n < 1 || n > left - 16 || p[4 + n - 1] != 0) return -1;
      return 4 + static_cast<int64_t>(n) + 12;
    }
    default:
      return -1;
  }
}

// Size of an element's value, or -1 when it does not fit in [p, end).
int64_t value_size(uint8_t type, const uint8_t* p, const uint8_t* end) {
  const int64_t size = raw_value_size(type, p, end);
  return size <= end - p ? size : -1;
}

bool is_reference_name(const uint8_t* key, size_t n) {
  if (n > 3 && key[n - 3] == '_' && key[n - 2] == 'i' && key[n - 1] == 'd') return true;
  return n > 2 && key[n - 2] == 'I' && key[n - 1] == 'd';
}

uint64_t hash_bytes(const uint8_t* p, size_t n) {
  uint64_t h = kRootHash ^ n;
  for (size_t i = 0; i < n && i < 64; ++i) h = (h ^ p[i]) * kFnvPrime;
  return mix(h);
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

int32_t CollectionProfile::slot_for(uint64_t hash, int32_t parent_slot, const uint8_t* key,
                                    size_t key_length, uint32_t depth, bool inside_array) {
  const size_t mask = slot_hashes_.size() - 1;
  size_t i = hash & mask;
  for (; slot_hashes_[i] != 0; i = (i + 1) & mask) {
    if (slot_hashes_[i] == hash) return slot_index_[i];
  }
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

bool CollectionProfile::walk_array(Walk& walk, const uint8_t* p, const uint8_t* end, uint64_t hash,
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
  while (p < end) {
    const uint8_t type = *p++;
    const void* key_end = std::memchr(p, 0, static_cast<size_t>(end - p));
    if (!key_end) return false;
    p = static_cast<const uint8_t*>(key_end) + 1;
    const int64_t size = value_size(type, p, end);
    if (size < 0) return false;
    ++length;
    if (array >= 0) arrays_[array].element_types |= bson_type_bit(type);
    if (depth < kMaxWalkDepth) {
      // Elements' fields share the array's path: "items.productId" for every element.
      if (type == 0x03 && !walk_document(walk, p + 4, p + size - 1, hash, slot, depth + 1, true)) {
        return false;
      }
      if (type == 0x04 && !walk_array(walk, p + 4, p + size - 1, hash, slot, depth + 1)) {
        return false;
      }
    }
    p += size;
  }
  if (array >= 0) {
    ArrayStats& stats = arrays_[array];
    stats.lengths.add(length);
    if (stats.longest.size() < kLongestKept || length > stats.longest.back().value) {
      pending_longest_.emplace_back(array, length);
    }
  }
  return true;
}

bool CollectionProfile::walk_document(Walk& walk, const uint8_t* p, const uint8_t* end,
                                      uint64_t parent_hash, int32_t parent_slot, uint32_t depth,
                                      bool inside_array) {
  if (depth > walk.max_depth) walk.max_depth = depth;
  while (p < end) {
    const uint8_t type = *p++;
    // Hash the key while looking for its end: one pass over its bytes.
    const uint8_t* key = p;
    uint64_t h = parent_hash ^ 0x2e;
    while (p < end && *p) h = (h ^ *p++) * kFnvPrime;
    if (p >= end) return false;
    const size_t key_length = static_cast<size_t>(p - key);
    ++p;
    h = mix(h);
    const int64_t size = value_size(type, p, end);
    if (size < 0) return false;
    const int32_t slot = slot_for(h, parent_slot, key, key_length, depth, inside_array);
    if (slot >= 0) {
      FieldStats& field = fields_[slot];
      ++field.occurrences;
      if (field.last_document != walk.document_number) {
        field.last_document = walk.document_number;
        ++field.documents;
      }
      field.types |= bson_type_bit(type);
      const uint64_t bytes = static_cast<uint64_t>(size) + key_length + 2;
      field.total_value_bytes += bytes;
      if (bytes > field.max_value_bytes) field.max_value_bytes = bytes;
      if (type == 0x09) {
        int64_t millis;
        std::memcpy(&millis, p, 8);
        field.min_date = std::min(field.min_date, millis);
        field.max_date = std::max(field.max_date, millis);
      }
      if (depth == 1 && (type == 0x02 || type == 0x07 || type == 0x10 || type == 0x12)) {
        if (!field.distinct && distinct_fields_ < settings_.max_distinct_tracked_fields &&
            !(key_length == 3 && std::memcmp(key, "_id", 3) == 0)) {
          field.distinct = std::make_unique<DistinctCounter>(settings_.distinct_values_cap);
          ++distinct_fields_;
        }
        if (field.distinct && !field.distinct->saturated()) {
          field.distinct->add(hash_bytes(p, static_cast<size_t>(size)) ^ type);
        }
      }
    }
    if (depth < kMaxWalkDepth) {
      if (type == 0x03 &&
          !walk_document(walk, p + 4, p + size - 1, h, slot, depth + 1, inside_array)) {
        return false;
      }
      if (type == 0x04 && !walk_array(walk, p + 4, p + size - 1, h, slot, depth + 1)) {
        return false;
      }
    }
    p += size;
  }
  return true;
}

void CollectionProfile::note_longest(std::vector<DocumentRef>& list, uint64_t value,
                                     const std::string& id) {
  if (list.size() >= kLongestKept && value <= list.back().value) return;
  for (DocumentRef& known : list) {  // one document, several arrays at this path
    if (known.id != id) continue;
    known.value = std::max(known.value, value);
    std::stable_sort(list.begin(), list.end(),
                     [](const DocumentRef& a, const DocumentRef& b) { return a.value > b.value; });
    return;
  }
  list.push_back(DocumentRef{value, id});
  std::stable_sort(list.begin(), list.end(),
                   [](const DocumentRef& a, const DocumentRef& b) { return a.value > b.value; });
  if (list.size() > kLongestKept) list.pop_back();
}

bool CollectionProfile::add_document(const uint8_t* data, uint32_t size, std::string* error) {
  if (size < 5 || static_cast<uint32_t>(read_i32(data)) != size || data[size - 1] != 0) {
    *error = "corrupt document: length prefix does not match its framing";
    return false;
  }
  Walk walk{sizes_.count() + 1, 1};
  pending_longest_.clear();
  if (!walk_document(walk, data + 4, data + size - 1, kRootHash, -1, 1, false)) {
    *error = "corrupt document: an element runs past its document's end or has an unknown type";
    return false;
  }
  sizes_.add(size);
  const bool largest = largest_.size() < kLongestKept || size > largest_.back().value;
  const bool deepest = walk.max_depth > max_depth_.value;
  if (largest || deepest || !pending_longest_.empty()) {
    // Rare once the collection's extremes are known: only then is the _id formatted.
    const std::string id = document_id_text(data, size);
    if (largest) note_longest(largest_, size, id);
    if (deepest) max_depth_ = DocumentRef{walk.max_depth, id};
    for (const auto& [array, length] : pending_longest_)
      note_longest(arrays_[array].longest, length, id);
  }
  return true;
}

}  // namespace docguard::advisor
