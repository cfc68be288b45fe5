#include "schema_values.h"

#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace docguard::rules::schema {

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

int32_t read_i32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
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
    auto x = number_of(a), y = number_of(b);
    return x && y && *x == *y;
  }
  if (a.type != b.type) return false;
  if (a.is_document()) return documents_equal_unordered(a, b, depth);
  if (a.is_array()) return arrays_equal(a, b, depth);
  return a.size == b.size && (a.size == 0 || std::memcmp(a.data, b.data, a.size) == 0);
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
      return static_cast<double>(read_i32(v.data));
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

void append_value(bson_t* parent, const char* key, const Value& v) {
  // A one-element document {"": v}, iterated to reach libbson's append of an iterator.
  std::vector<uint8_t> buf(4 + 1 + 1 + v.size + 1, 0);
  const auto total = static_cast<uint32_t>(buf.size());
  std::memcpy(buf.data(), &total, 4);
  buf[4] = v.type;
  buf[5] = 0;
  if (v.size > 0) std::memcpy(buf.data() + 6, v.data, v.size);
  bson_iter_t it;
  if (bson_iter_init_from_data(&it, buf.data(), buf.size()) && bson_iter_next(&it)) {
    bson_append_iter(parent, key, -1, &it);
  } else {
    bson_append_null(parent, key, -1);
  }
}

}  // namespace docguard::rules::schema
