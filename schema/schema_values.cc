#include "schema_values.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "docguard/codec/bson_elements.h"
#include "schema_numbers.h"

namespace docguard::schema {

namespace {

struct TypeEntry {
  uint8_t type;
  const char* name;
};
// The server's type aliases (the names `bsonType` accepts and consideredType reports).
constexpr std::array<TypeEntry, 21> kTypes = {{
    {BSON_TYPE_DOUBLE, "double"},
    {BSON_TYPE_UTF8, "string"},
    {BSON_TYPE_DOCUMENT, "object"},
    {BSON_TYPE_ARRAY, "array"},
    {BSON_TYPE_BINARY, "binData"},
    {BSON_TYPE_UNDEFINED, "undefined"},
    {BSON_TYPE_OID, "objectId"},
    {BSON_TYPE_BOOL, "bool"},
    {BSON_TYPE_DATE_TIME, "date"},
    {BSON_TYPE_NULL, "null"},
    {BSON_TYPE_REGEX, "regex"},
    {BSON_TYPE_DBPOINTER, "dbPointer"},
    {BSON_TYPE_CODE, "javascript"},
    {BSON_TYPE_SYMBOL, "symbol"},
    {BSON_TYPE_CODEWSCOPE, "javascriptWithScope"},
    {BSON_TYPE_INT32, "int"},
    {BSON_TYPE_TIMESTAMP, "timestamp"},
    {BSON_TYPE_INT64, "long"},
    {BSON_TYPE_DECIMAL128, "decimal"},
    {BSON_TYPE_MINKEY, "minKey"},
    {BSON_TYPE_MAXKEY, "maxKey"},
}};

TypeMask numbers() {
  return type_bit(BSON_TYPE_INT32) | type_bit(BSON_TYPE_INT64) | type_bit(BSON_TYPE_DOUBLE) |
         type_bit(BSON_TYPE_DECIMAL128);
}

// Documents nest at most 100 levels on a server; deeper values compare unequal rather than
// recurse without bound.
constexpr int kMaxCompareDepth = 128;

bool equal_at(const Value& a, const Value& b, int depth);

bool documents_equal_unordered(const Value& a, const Value& b, int depth) {
  if (element_count(a) != element_count(b)) return false;
  for (codec::BsonElements ea(a.data, a.size); ea.next();) {
    bool found = false;
    for (codec::BsonElements eb(b.data, b.size); eb.next();) {
      if (eb.key == ea.key) {
        found = equal_at(Value::of(ea), Value::of(eb), depth + 1);
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

bool arrays_equal(const Value& a, const Value& b, int depth) {
  codec::BsonElements ea(a.data, a.size), eb(b.data, b.size);
  while (true) {
    const bool more_a = ea.next(), more_b = eb.next();
    if (more_a != more_b) return false;
    if (!more_a) return true;
    if (!equal_at(Value::of(ea), Value::of(eb), depth + 1)) return false;
  }
}

bool equal_at(const Value& a, const Value& b, int depth) {
  if (depth > kMaxCompareDepth) return false;
  if (a.is_number() && b.is_number()) {
    auto x = decode_number(a), y = decode_number(b);
    return x && y && compare_numbers(*x, *y) == 0;
  }
  if (a.type != b.type) return false;
  if (a.is_document()) return documents_equal_unordered(a, b, depth);
  if (a.is_array()) return arrays_equal(a, b, depth);
  return a.size == b.size && (a.size == 0 || std::memcmp(a.data, b.data, a.size) == 0);
}

uint64_t hash_bytes(uint64_t h, const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001B3ULL;  // FNV-1a
  return h;
}

uint64_t hash_at(const Value& v, int depth) {
  constexpr uint64_t kBasis = 0xCBF29CE484222325ULL;
  if (v.is_number()) {
    auto n = decode_number(v);
    return n ? number_hash(*n) : 0;
  }
  const uint64_t typed = hash_bytes(kBasis, &v.type, 1);
  if (depth > kMaxCompareDepth) return typed;
  if (v.is_document()) {
    // Field order does not matter to equality, so the fields' hashes are summed.
    uint64_t sum = typed;
    for (codec::BsonElements e(v.data, v.size); e.next();) {
      const uint64_t key =
          hash_bytes(kBasis, reinterpret_cast<const uint8_t*>(e.key.data()), e.key.size());
      sum += (key * 31) ^ hash_at(Value::of(e), depth + 1);
    }
    return sum;
  }
  if (v.is_array()) {
    uint64_t h = typed;
    for (codec::BsonElements e(v.data, v.size); e.next();) {
      h = h * 0x100000001B3ULL + hash_at(Value::of(e), depth + 1);
    }
    return h;
  }
  return hash_bytes(typed, v.data, v.size);
}

}  // namespace

TypeMask type_bit(uint8_t bson_type) {
  if (bson_type == BSON_TYPE_MINKEY) return TypeMask{1} << 30;
  if (bson_type == BSON_TYPE_MAXKEY) return TypeMask{1} << 31;
  return bson_type < 30 ? TypeMask{1} << bson_type : 0;
}

const char* type_name(uint8_t bson_type) {
  for (const auto& t : kTypes) {
    if (t.type == bson_type) return t.name;
  }
  return "unknown";
}

std::optional<TypeMask> bson_type_alias(std::string_view alias) {
  if (alias == "number") return numbers();
  for (const auto& t : kTypes) {
    if (alias == t.name) return type_bit(t.type);
  }
  return std::nullopt;
}

std::optional<TypeMask> json_type_alias(std::string_view alias) {
  if (alias == "object") return type_bit(BSON_TYPE_DOCUMENT);
  if (alias == "array") return type_bit(BSON_TYPE_ARRAY);
  if (alias == "number") return numbers();
  if (alias == "boolean") return type_bit(BSON_TYPE_BOOL);
  if (alias == "string") return type_bit(BSON_TYPE_UTF8);
  if (alias == "null") return type_bit(BSON_TYPE_NULL);
  return std::nullopt;
}

std::optional<double> number_of(const Value& v) {
  switch (v.type) {
    case BSON_TYPE_DOUBLE: {
      if (v.size < 8) return std::nullopt;
      double d;
      std::memcpy(&d, v.data, 8);
      return d;
    }
    case BSON_TYPE_INT32:
      if (v.size < 4) return std::nullopt;
      return static_cast<double>(codec::load_le32(v.data));
    case BSON_TYPE_INT64: {
      if (v.size < 8) return std::nullopt;
      int64_t i;
      std::memcpy(&i, v.data, 8);
      return static_cast<double>(i);
    }
    case BSON_TYPE_DECIMAL128: {
      if (v.size < 16) return std::nullopt;
      bson_decimal128_t dec;
      std::memcpy(&dec.low, v.data, 8);
      std::memcpy(&dec.high, v.data + 8, 8);
      char text[BSON_DECIMAL128_STRING];
      bson_decimal128_to_string(&dec, text);
      if (std::strcmp(text, "NaN") == 0) return std::nan("");
      if (std::strcmp(text, "Infinity") == 0) return HUGE_VAL;
      if (std::strcmp(text, "-Infinity") == 0) return -HUGE_VAL;
      return std::strtod(text, nullptr);
    }
    default:
      return std::nullopt;
  }
}

uint64_t code_points(std::string_view text) {
  uint64_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

uint32_t element_count(const Value& v) {
  uint32_t n = 0;
  for (codec::BsonElements e(v.data, v.size); e.next();) ++n;
  return n;
}

bool values_equal(const Value& a, const Value& b) { return equal_at(a, b, 0); }

uint64_t value_hash(const Value& v) { return hash_at(v, 0); }

std::optional<Value> first_duplicate(const Value& array) {
  // Short arrays: pairwise, without allocating.
  constexpr uint32_t kPairwise = 16;
  if (element_count(array) <= kPairwise) {
    for (codec::BsonElements later(array.data, array.size); later.next();) {
      for (codec::BsonElements earlier(array.data, array.size); earlier.next();) {
        if (earlier.value == later.value) break;
        if (values_equal(Value::of(earlier), Value::of(later))) return Value::of(later);
      }
    }
    return std::nullopt;
  }
  // Longer ones: sorted by hash (equal values hash alike), then only equal hashes compared.
  struct Entry {
    uint64_t hash;
    uint32_t index;
    Value value;
  };
  std::vector<Entry> entries;
  uint32_t index = 0;
  for (codec::BsonElements e(array.data, array.size); e.next(); ++index) {
    entries.push_back({value_hash(Value::of(e)), index, Value::of(e)});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.hash != b.hash ? a.hash < b.hash : a.index < b.index;
  });
  const Entry* first = nullptr;
  for (size_t run = 0; run < entries.size();) {
    size_t end = run + 1;
    while (end < entries.size() && entries[end].hash == entries[run].hash) ++end;
    for (size_t later = run + 1; later < end; ++later) {
      if (first != nullptr && entries[later].index >= first->index) break;
      for (size_t earlier = run; earlier < later; ++earlier) {
        if (values_equal(entries[earlier].value, entries[later].value)) {
          first = &entries[later];
          break;
        }
      }
      if (first == &entries[later]) break;
    }
    run = end;
  }
  return first ? std::optional<Value>(first->value) : std::nullopt;
}

void append_value(bson_t* parent, const char* key, const Value& v) {
  // A one-element document {"": v}, its element copied under `key`.
  std::vector<uint8_t> buf(4 + 1 + 1 + v.size + 1, 0);
  const auto total = static_cast<uint32_t>(buf.size());
  std::memcpy(buf.data(), &total, 4);
  buf[4] = v.type;
  buf[5] = 0;
  if (v.size > 0) std::memcpy(buf.data() + 6, v.data, v.size);
  codec::BsonElements element(buf.data(), total);
  if (!element.next() || !element.append_to(parent, key)) {
    bson_append_null(parent, key, -1);
  }
}

}  // namespace docguard::schema
