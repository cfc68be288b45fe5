// A walk over the elements of BSON bytes that steps over values without decoding them: for
// reading a few fields of every request and reply, and for measuring document shapes on every
// write.
#pragma once

#include <bson/bson.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "docguard/codec/bson_value.h"
#include "docguard/codec/bson_view.h"

namespace docguard::codec {

// The elements of one document or array: the type, the key and the value's bytes. libbson's
// iterator decodes and checks each value it passes, about three times the instructions per
// element of this walk, which only steps over values. Bounds are still checked (the bytes need
// not have been validated): a malformed element ends the walk, as it ends libbson's, including
// the value checks libbson makes on strings (NUL-terminated, length at least 1) and booleans.
class BsonElements : public BsonValue {
 public:
  // `data`, `size`: the whole container, length prefix and trailing NUL included.
  // A container that does not end in NUL has no elements (and is malformed), as libbson's
  // bson_init_static refuses it; one that does lets next() look for a key's NUL without a
  // bound of its own.
  BsonElements(const uint8_t* data, uint32_t size)
      : begin_(data), p_(size >= 5 ? data + 4 : data), end_(size >= 5 ? data + size - 1 : data) {
    if (size >= 5 && *end_ != 0) stop();
  }
  explicit BsonElements(const BsonView& doc) : BsonElements(doc.data, doc.size) {}
  // A document libbson or libmongoc built (a reply, a command docguard composes).
  explicit BsonElements(const bson_t* doc) : BsonElements(bson_get_data(doc), doc->len) {}

  std::string_view key;

  // The bytes of the whole element (type byte, key, value): for copying it as it is.
  std::string_view element_bytes() const {
    const char* start = key.data() - 1;
    return {start, static_cast<size_t>(reinterpret_cast<const char*>(value) + value_size - start)};
  }
  // libbson's iterator on this element, for the few libbson calls that take one
  // (bson_iter_value, bson_append_iter): the one bridge from this walk back to libbson.
  bool to_iter(bson_iter_t* out) const {
    if (value == nullptr) return false;
    const uint8_t* element = reinterpret_cast<const uint8_t*>(key.data()) - 1;
    return bson_iter_init_from_data_at_offset(out, begin_, static_cast<size_t>(end_ + 1 - begin_),
                                              static_cast<uint32_t>(element - begin_),
                                              static_cast<uint32_t>(key.size()));
  }
  // Copies this element's value into `out` under `name`.
  bool append_to(bson_t* out, std::string_view name) const {
    bson_iter_t it;
    return to_iter(&it) && bson_append_iter(out, name.data(), static_cast<int>(name.size()), &it);
  }
  // The value as libbson's bson_value_t, borrowing these bytes (valid while they live).
  bool borrow_value(bson_value_t* out) const {
    bson_iter_t it;
    if (!to_iter(&it)) return false;
    *out = *bson_iter_value(&it);
    return true;
  }

  // Steps to the next element named `name`; false (the walk over) when none is left.
  bool find(std::string_view name) {
    while (next()) {
      if (key == name) return true;
    }
    return false;
  }

  bool next() {
    if (p_ >= end_) return false;
    type = *p_++;
    // Keys are short: a plain loop costs less than a call to memchr. *end_ is NUL (the
    // constructor saw it), so the loop stops there at the latest: a key running into it is
    // malformed.
    const uint8_t* nul = p_;
    // Two bytes a step: nul[1] is read only after nul[0] was not the NUL, so never past *end_.
    while (nul[0] != 0 && nul[1] != 0) nul += 2;
    if (*nul != 0) ++nul;
    if (nul == end_) return stop();
    key = std::string_view(reinterpret_cast<const char*>(p_), nul - p_);
    value = nul + 1;
    const size_t left = end_ - value;
    // The common types inline, from a table; the rest (and anything malformed) out of line, so
    // this stays small enough to inline in the walks that run on every message.
    size_t size = kValueSizes[type];
    if (size == kStringSize) {
      if (left < 4) return stop();
      const uint32_t length = le32(value);  // the NUL included
      if (length < 1 || length > left - 4 || value[4 + length - 1] != 0) return stop();
      size = size_t{4} + length;
    } else if (size == kContainerSize) {
      if (left < 5) return stop();
      size = le32(value);
      if (size < 5) return stop();
    } else if (size == kOtherSize) {
      return next_other(left);
    } else if (type == BSON_TYPE_BOOL && (left < 1 || value[0] > 1)) {
      return stop();
    }
    if (size > left) return stop();
    value_size = static_cast<uint32_t>(size);
    p_ = value + size;
    return true;
  }

  // Whether the walk ended on a malformed element rather than at the container's end.
  bool malformed() const { return malformed_; }

 private:
  // kValueSizes: a fixed size, or how the size is read.
  static constexpr uint8_t kStringSize = 0xFD;     // UTF-8: an int32 length, then the bytes
  static constexpr uint8_t kContainerSize = 0xFE;  // document, array: the int32 prefix
  static constexpr uint8_t kOtherSize = 0xFF;      // the rare types, and unknown ones
  static constexpr std::array<uint8_t, 256> kValueSizes = [] {
    std::array<uint8_t, 256> t{};
    t.fill(kOtherSize);
    for (const uint8_t empty :
         {BSON_TYPE_UNDEFINED, BSON_TYPE_NULL, BSON_TYPE_MINKEY, BSON_TYPE_MAXKEY}) {
      t[empty] = 0;
    }
    t[BSON_TYPE_BOOL] = 1;
    t[BSON_TYPE_INT32] = 4;
    for (const uint8_t eight :
         {BSON_TYPE_DOUBLE, BSON_TYPE_DATE_TIME, BSON_TYPE_TIMESTAMP, BSON_TYPE_INT64}) {
      t[eight] = 8;
    }
    t[BSON_TYPE_OID] = 12;
    t[BSON_TYPE_DECIMAL128] = 16;
    t[BSON_TYPE_UTF8] = kStringSize;
    t[BSON_TYPE_DOCUMENT] = kContainerSize;
    t[BSON_TYPE_ARRAY] = kContainerSize;
    return t;
  }();

  // next() for the types the table leaves out: code, symbol, binary, DBPointer, code with
  // scope, regex; any other type byte is malformed.
  [[gnu::noinline]] bool next_other(size_t left) {
    size_t size = 0;
    switch (type) {
      case BSON_TYPE_CODE:
      case BSON_TYPE_SYMBOL: {
        if (left < 4) return stop();
        const uint32_t length = le32(value);  // the NUL included
        if (length < 1 || length > left - 4 || value[4 + length - 1] != 0) return stop();
        size = size_t{4} + length;
        break;
      }
      case BSON_TYPE_BINARY:
        if (left < 4) return stop();
        size = size_t{5} + le32(value);
        break;
      case BSON_TYPE_DBPOINTER:
        if (left < 4) return stop();
        size = size_t{4} + le32(value) + 12;
        break;
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
  bool stop() {
    p_ = end_;
    malformed_ = true;
    return false;
  }
  const uint8_t* begin_;
  const uint8_t* p_;
  const uint8_t* end_;
  bool malformed_ = false;
};

// The element at a dotted path ("cursor.id", "a.0.b"), as bson_iter_find_descendant finds it:
// false when a step is missing or not a document or array.
inline bool find_path(const BsonView& doc, std::string_view path, BsonElements* out) {
  BsonView container = doc;
  while (true) {
    const size_t dot = path.find('.');
    const std::string_view step = path.substr(0, dot);
    BsonElements e(container);
    if (!e.find(step)) return false;
    if (dot == std::string_view::npos) {
      *out = e;
      return true;
    }
    container = e.container();
    if (container.empty()) return false;
    path.remove_prefix(dot + 1);
  }
}

// The value of `key` in `doc` as an integer (a number that is one), or `fallback`.
inline int64_t int_field(const BsonView& doc, std::string_view key, int64_t fallback = 0) {
  BsonElements e(doc);
  int64_t v = 0;
  return e.find(key) && e.as_int(&v) ? v : fallback;
}

// Whether `doc` is framed as libbson's iterator requires before it reads one element: at least
// five bytes, a length prefix equal to the size, a trailing NUL.
inline bool well_framed(const BsonView& doc) {
  return !doc.empty() && doc.size >= 5 && le32(doc.data) == doc.size && doc.data[doc.size - 1] == 0;
}

inline bool is_container(uint8_t type) {
  return type == BSON_TYPE_DOCUMENT || type == BSON_TYPE_ARRAY;
}

// A query or update operator's name ($gte, $set, $elemMatch): how filters and updates tell
// their operators from field names.
inline bool is_operator(std::string_view key) { return !key.empty() && key[0] == '$'; }

// The first key of a document, "" when it is empty (or malformed).
inline std::string_view first_key(const BsonView& doc) {
  BsonElements e(doc);
  return e.next() ? e.key : std::string_view();
}
// The first key of the document an element or iterator holds; "" for any other value.
inline std::string_view first_key_of(const BsonElements& e) {
  return e.holds_document() ? first_key(e.container()) : std::string_view();
}
inline std::string_view first_key_of(const bson_iter_t& it) {
  return BSON_ITER_HOLDS_DOCUMENT(&it) ? first_key(view_of(it)) : std::string_view();
}

// Whether a well-framed document's first key is an operator: an update's {$set: ...} rather
// than a replacement, an {_id: {$in: ...}} condition rather than an _id value.
inline bool is_operator_document(const BsonView& doc) {
  return well_framed(doc) && is_operator(first_key(doc));
}

}  // namespace docguard::codec
