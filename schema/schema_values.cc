#include "schema_values.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "docguard/base/hash.h"
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

// A server stores documents nested up to 180 levels (with its own envelope, 200): values are
// compared by meaning that deep, and past it as bytes rather than recursed into without bound.
constexpr int kMaxCompareDepth = 200;

// The class a value compares in, as the server's canonical types: every number is one class
// (compared by value), and a Symbol is a String (compared by its text).
uint8_t compare_class(uint8_t type) {
  switch (type) {
    case BSON_TYPE_INT32:
    case BSON_TYPE_INT64:
    case BSON_TYPE_DECIMAL128:
      return BSON_TYPE_DOUBLE;
    case BSON_TYPE_SYMBOL:
      return BSON_TYPE_UTF8;
    default:
      return type;
  }
}

int three_way(auto a, auto b) { return a < b ? -1 : (b < a ? 1 : 0); }

int compare_bytes(const Value& a, const Value& b) {
  const int c = std::memcmp(a.data, b.data, std::min(a.size, b.size));
  return c != 0 ? (c < 0 ? -1 : 1) : three_way(a.size, b.size);
}

int compare_at(const Value& a, const Value& b, int depth);

struct Field {
  std::string_view key;
  Value value;
};

// A document's fields in key order (stable: repeated keys keep their order): the server's
// unordered-fields comparison, in O(k log k).
std::vector<Field> sorted_fields(const Value& v) {
  std::vector<Field> fields;
  for (codec::BsonElements e(v.data, v.size); e.next();) fields.push_back({e.key, Value::of(e)});
  std::stable_sort(fields.begin(), fields.end(),
                   [](const Field& x, const Field& y) { return x.key < y.key; });
  return fields;
}

int compare_documents(const Value& a, const Value& b, int depth) {
  const std::vector<Field> x = sorted_fields(a), y = sorted_fields(b);
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (const int k = x[i].key.compare(y[i].key); k != 0) return k < 0 ? -1 : 1;
    if (const int c = compare_at(x[i].value, y[i].value, depth + 1); c != 0) return c;
  }
  return three_way(x.size(), y.size());
}

int compare_arrays(const Value& a, const Value& b, int depth) {
  codec::BsonElements ea(a.data, a.size), eb(b.data, b.size);
  while (true) {
    const bool more_a = ea.next(), more_b = eb.next();
    if (more_a != more_b) return more_a ? 1 : -1;
    if (!more_a) return 0;
    if (const int c = compare_at(Value::of(ea), Value::of(eb), depth + 1); c != 0) return c;
  }
}

// A total order whose equality is the server's for `enum` and `uniqueItems`: numbers by value
// across types, String and Symbol by text, documents regardless of field order, arrays in
// order, other types byte for byte. uniqueItems sorts by it (as the server's ordered set does),
// so no input costs more than O(n log n) comparisons.
int compare_at(const Value& a, const Value& b, int depth) {
  const uint8_t ca = compare_class(a.type), cb = compare_class(b.type);
  if (ca != cb) return three_way(ca, cb);
  if (depth > kMaxCompareDepth) return compare_bytes(a, b);
  if (ca == BSON_TYPE_DOUBLE) {
    const auto x = decode_number(a), y = decode_number(b);
    if (x && y) return compare_numbers(*x, *y);
    if (x.has_value() != y.has_value()) return x ? -1 : 1;
    return compare_bytes(a, b);
  }
  if (a.is_document()) return compare_documents(a, b, depth);
  if (a.is_array()) return compare_arrays(a, b, depth);
  return compare_bytes(a, b);
}

// A hash equal for values compare_at calls equal: a cheap first sort key, never trusted alone.
uint64_t hash_at(const Value& v, int depth) {
  constexpr uint64_t kBasis = 0xCBF29CE484222325ULL;  // any constant
  // An array's hash is a polynomial of its items' hashes: order matters, as it does to equality.
  constexpr uint64_t kArrayStep = 0x100000001B3ULL;
  const uint8_t cls = compare_class(v.type);
  if (cls == BSON_TYPE_DOUBLE) {
    auto n = decode_number(v);
    return n ? number_hash(*n) : 0;
  }
  const uint64_t typed = base::hash_bytes(&cls, 1, kBasis);
  if (depth > kMaxCompareDepth) return base::hash_bytes(v.data, v.size, typed);
  if (v.is_document()) {
    // Field order does not matter to equality, so the fields' hashes are summed.
    uint64_t sum = typed;
    for (codec::BsonElements e(v.data, v.size); e.next();) {
      const uint64_t key = base::hash_bytes(e.key, kBasis);
      sum += (key * 31) ^ hash_at(Value::of(e), depth + 1);
    }
    return sum;
  }
  if (v.is_array()) {
    uint64_t h = typed;
    for (codec::BsonElements e(v.data, v.size); e.next();) {
      h = h * kArrayStep + hash_at(Value::of(e), depth + 1);
    }
    return h;
  }
  return base::hash_bytes(v.data, v.size, typed);
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

bool values_equal(const Value& a, const Value& b) { return compare_at(a, b, 0) == 0; }

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
  // Longer ones: sorted by (hash, value, position), so equal values sit together in position
  // order. The hash only makes most comparisons cheap; values sharing one (crafted to, or by
  // chance) are ordered by compare_at, never compared pairwise.
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
    if (a.hash != b.hash) return a.hash < b.hash;
    if (const int c = compare_at(a.value, b.value, 0); c != 0) return c < 0;
    return a.index < b.index;
  });
  // The server reports the later element of the earliest-completed pair: per group of equal
  // values, its second position; the smallest of those.
  const Entry* first = nullptr;
  size_t run = 1;  // equal values so far, ending at entries[i]
  for (size_t i = 1; i < entries.size(); ++i) {
    const Entry& prev = entries[i - 1];
    const Entry& cur = entries[i];
    const bool same = prev.hash == cur.hash && compare_at(prev.value, cur.value, 0) == 0;
    run = same ? run + 1 : 1;
    if (run == 2 && (first == nullptr || cur.index < first->index)) first = &cur;
  }
  return first ? std::optional<Value>(first->value) : std::nullopt;
}

void append_value(bson_t* parent, const char* key, const Value& v) {
  ExplainBounds& copies = explain_bounds;
  if (copies.truncated && std::strncmp(key, "consideredValue", 15) == 0) return;
  if (v.size > copies.bytes_left) {
    copies.exceeded = true;
    return;
  }
  copies.bytes_left -= v.size;
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
