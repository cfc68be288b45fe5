// One BSON value, its type and its bytes, with the typed reads every layer needs: what a walk
// over elements (bson_elements.h) is on, and what a caller keeps of an element it found.
#pragma once

#include <bson/bson.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "docguard/codec/bson_view.h"

namespace docguard::codec {

inline uint32_t le32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // BSON is little-endian, and so is every platform docguard builds for
}

// One BSON value: its type and its bytes (documents and arrays: length prefix included), with
// the typed reads every layer needs. What a walk over elements (BsonElements) is on, and what a
// caller keeps of an element it found without keeping the walk.
struct BsonValue {
  BsonValue() = default;
  BsonValue(uint8_t t, const uint8_t* v, uint32_t size) : type(t), value(v), value_size(size) {}

  uint8_t type = 0;
  const uint8_t* value = nullptr;  // the value's bytes (documents and arrays: length included)
  uint32_t value_size = 0;

  bool holds_document() const { return type == BSON_TYPE_DOCUMENT; }
  bool holds_utf8() const { return type == BSON_TYPE_UTF8; }
  bool holds_bool() const { return type == BSON_TYPE_BOOL; }
  bool holds_int32() const { return type == BSON_TYPE_INT32; }
  bool holds_int64() const { return type == BSON_TYPE_INT64; }
  bool holds_double() const { return type == BSON_TYPE_DOUBLE; }
  bool holds_int() const { return holds_int32() || holds_int64(); }  // BSON_ITER_HOLDS_INT
  bool holds_regex() const { return type == BSON_TYPE_REGEX; }
  bool holds_array() const { return type == BSON_TYPE_ARRAY; }
  bool holds_number() const {  // BSON_ITER_HOLDS_NUMBER
    return type == BSON_TYPE_INT32 || type == BSON_TYPE_INT64 || type == BSON_TYPE_DOUBLE;
  }
  // An embedded document or array; empty for other types.
  BsonView container() const {
    return holds_document() || holds_array() ? BsonView{value, value_size} : BsonView{};
  }
  // A string value ("" for other types), as bson_iter_utf8 gives it.
  std::string_view utf8() const {
    if (type != BSON_TYPE_UTF8) return {};
    return {reinterpret_cast<const char*>(value) + 4, value_size - 5};
  }
  // Fixed-size values, for an element that holds that type (check the type first).
  int32_t int32() const { return static_cast<int32_t>(le32(value)); }
  int64_t int64() const { return load<int64_t>(); }
  double double_value() const { return load<double>(); }
  int64_t date_time() const { return load<int64_t>(); }  // milliseconds since the epoch
  const uint8_t* oid_bytes() const { return value; }     // 12 bytes
  bson_decimal128_t decimal128() const {
    bson_decimal128_t d;
    std::memcpy(&d.low, value, 8);
    std::memcpy(&d.high, value + 8, 8);
    return d;
  }
  // A timestamp's increment and seconds.
  uint32_t timestamp_increment() const { return le32(value); }
  uint32_t timestamp_seconds() const { return le32(value + 4); }
  // A regular expression's pattern and options; false for other types.
  bool regex(std::string_view* pattern, std::string_view* options) const {
    if (type != BSON_TYPE_REGEX) return false;
    const auto* p = reinterpret_cast<const char*>(value);
    const size_t pattern_size = std::strlen(p);  // next() checked both NULs are inside
    *pattern = {p, pattern_size};
    *options = {p + pattern_size + 1, value_size - pattern_size - 2};
    return true;
  }
  // A binary value's subtype and bytes; false for other types.
  bool binary(uint8_t* subtype, std::string_view* bytes) const {
    if (type != BSON_TYPE_BINARY || value_size < 5) return false;
    *subtype = value[4];
    *bytes = {reinterpret_cast<const char*>(value) + 5, value_size - 5};
    return true;
  }
  // The value as bson_iter_as_double reads it: a number or a boolean, else 0.
  double as_double() const {
    switch (type) {
      case BSON_TYPE_BOOL:
        return value[0] != 0 ? 1.0 : 0.0;
      case BSON_TYPE_DOUBLE:
        return double_value();
      case BSON_TYPE_INT32:
        return static_cast<double>(int32());
      case BSON_TYPE_INT64:
        return static_cast<double>(int64());
      default:
        return 0;
    }
  }
  // The value as a boolean, as bson_iter_as_bool reads it: numbers are true when not zero,
  // null and undefined false, other types true.
  bool as_bool() const {
    switch (type) {
      case BSON_TYPE_BOOL:
        return value[0] != 0;
      case BSON_TYPE_DOUBLE: {
        double d;
        std::memcpy(&d, value, 8);
        return d != 0.0;
      }
      case BSON_TYPE_INT32:
        return le32(value) != 0;
      case BSON_TYPE_INT64: {
        int64_t v;
        std::memcpy(&v, value, 8);
        return v != 0;
      }
      case BSON_TYPE_NULL:
      case BSON_TYPE_UNDEFINED:
        return false;
      default:
        return true;
    }
  }

  // The value as bson_iter_as_int64 reads it: a number or a boolean, else 0. A double out of
  // range gives INT64_MIN, as the conversion libbson makes does on x86-64.
  int64_t as_int64() const {
    switch (type) {
      case BSON_TYPE_BOOL:
        return value[0];
      case BSON_TYPE_DOUBLE: {
        double d;
        std::memcpy(&d, value, 8);
        if (!(d > -9.2e18 && d < 9.2e18)) return INT64_MIN;
        return static_cast<int64_t>(d);
      }
      case BSON_TYPE_INT32:
        return static_cast<int32_t>(le32(value));
      case BSON_TYPE_INT64: {
        int64_t v;
        std::memcpy(&v, value, 8);
        return v;
      }
      default:
        return 0;
    }
  }

  // The value as an integer, for a number that is one (int32, int64, a finite double).
  bool as_int(int64_t* out) const {
    switch (type) {
      case BSON_TYPE_INT32: {
        int32_t v;
        std::memcpy(&v, value, 4);
        *out = v;
        return true;
      }
      case BSON_TYPE_INT64:
        std::memcpy(out, value, 8);
        return true;
      case BSON_TYPE_DOUBLE: {
        double d;
        std::memcpy(&d, value, 8);
        if (!std::isfinite(d) || std::fabs(d) > 9e18) return false;
        *out = static_cast<int64_t>(d);
        return true;
      }
      default:
        return false;
    }
  }

 private:
  template <typename T>
  T load() const {
    T v;
    std::memcpy(&v, value, sizeof v);
    return v;
  }
};

}  // namespace docguard::codec
