// Private to the rules library: a walk over the elements of BSON bytes that steps over values
// without decoding them, for measuring document shapes on every write.
#pragma once

#include <bson/bson.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace docguard::rules::detail {

inline uint32_t le32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // BSON is little-endian, and so is every platform docguard builds for
}

// The elements of one document or array, for measuring: the type, the key and, for documents
// and arrays, their bytes. libbson's iterator decodes and checks each value it passes, about
// three times the instructions per element of this walk, which only steps over values. Bounds
// are still checked (a container's bytes need not have been validated): a malformed element
// ends the walk, as it ends libbson's.
class Elements {
 public:
  // `data`, `size`: the whole container, length prefix and trailing NUL included.
  Elements(const uint8_t* data, uint32_t size)
      : p_(data + 4), end_(size >= 5 ? data + size - 1 : data + 4) {}

  uint8_t type = 0;
  std::string_view key;
  const uint8_t* value = nullptr;  // the value's bytes (documents and arrays: length included)
  uint32_t value_size = 0;

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

  bool next() {
    if (p_ >= end_) return false;
    type = *p_++;
    // Keys are short: a plain loop costs less than a call to memchr.
    const uint8_t* nul = p_;
    while (nul < end_ && *nul != 0) ++nul;
    if (nul == end_) return stop();
    key = std::string_view(reinterpret_cast<const char*>(p_), nul - p_);
    value = nul + 1;
    const size_t left = end_ - value;
    size_t size = 0;
    switch (type) {
      case BSON_TYPE_UNDEFINED:
      case BSON_TYPE_NULL:
      case BSON_TYPE_MINKEY:
      case BSON_TYPE_MAXKEY:
        break;
      case BSON_TYPE_BOOL:
        size = 1;
        break;
      case BSON_TYPE_INT32:
        size = 4;
        break;
      case BSON_TYPE_DOUBLE:
      case BSON_TYPE_DATE_TIME:
      case BSON_TYPE_TIMESTAMP:
      case BSON_TYPE_INT64:
        size = 8;
        break;
      case BSON_TYPE_OID:
        size = 12;
        break;
      case BSON_TYPE_DECIMAL128:
        size = 16;
        break;
      case BSON_TYPE_UTF8:
      case BSON_TYPE_CODE:
      case BSON_TYPE_SYMBOL:
        if (left < 4) return stop();
        size = size_t{4} + le32(value);
        break;
      case BSON_TYPE_BINARY:
        if (left < 4) return stop();
        size = size_t{5} + le32(value);
        break;
      case BSON_TYPE_DBPOINTER:
        if (left < 4) return stop();
        size = size_t{4} + le32(value) + 12;
        break;
      case BSON_TYPE_DOCUMENT:
      case BSON_TYPE_ARRAY:
      case BSON_TYPE_CODEWSCOPE:
        if (left < 5) return stop();
        size = le32(value);
        if (size < 5) return stop();
        break;
      case BSON_TYPE_REGEX: {
        const auto* pattern_end = static_cast<const uint8_t*>(std::memchr(value, 0, left));
        if (pattern_end == nullptr) return stop();
        const size_t rest = end_ - (pattern_end + 1);
        const auto* options_end =
            static_cast<const uint8_t*>(std::memchr(pattern_end + 1, 0, rest));
        if (options_end == nullptr) return stop();
        size = options_end + 1 - value;
        break;
      }
      default:
        return stop();
    }
    if (size > left) return stop();
    value_size = static_cast<uint32_t>(size);
    p_ = value + size;
    return true;
  }

 private:
  bool stop() {
    p_ = end_;
    return false;
  }
  const uint8_t* p_;
  const uint8_t* end_;
};

inline bool is_container(uint8_t type) {
  return type == BSON_TYPE_DOCUMENT || type == BSON_TYPE_ARRAY;
}

}  // namespace docguard::rules::detail
