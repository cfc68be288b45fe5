// BSON values as $jsonSchema judges them: one element's type and bytes (no decoding until a
// keyword needs it), the server's type names and aliases, numbers, string lengths in code
// points, and value equality for `enum` and `uniqueItems`.
#pragma once

#include <bson/bson.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/bson_view.h"

namespace docguard::schema {

// One BSON value: its type byte and its bytes (documents and arrays: length prefix included).
struct Value {
  uint8_t type = 0;
  const uint8_t* data = nullptr;
  uint32_t size = 0;

  static Value of(const codec::BsonElements& e) { return {e.type, e.value, e.value_size}; }
  // A whole document as the value judged at the top of a schema.
  static Value document(const codec::BsonView& doc) {
    return {BSON_TYPE_DOCUMENT, doc.data, doc.size};
  }
  bool is_document() const { return type == BSON_TYPE_DOCUMENT; }
  bool is_array() const { return type == BSON_TYPE_ARRAY; }
  bool is_string() const { return type == BSON_TYPE_UTF8; }
  bool is_number() const {
    return type == BSON_TYPE_INT32 || type == BSON_TYPE_INT64 || type == BSON_TYPE_DOUBLE ||
           type == BSON_TYPE_DECIMAL128;
  }
  codec::BsonView container() const { return {data, size}; }
  std::string_view utf8() const {
    return size >= 5 ? std::string_view(reinterpret_cast<const char*>(data) + 4, size - 5)
                     : std::string_view();
  }
};

// A bit per BSON type, for type sets.
using TypeMask = uint32_t;
TypeMask type_bit(uint8_t bson_type);
// The server's name of a BSON type ("double", "string", "object", ... "int", "long",
// "decimal", "minKey"), as consideredType reports it.
const char* type_name(uint8_t bson_type);
// The types a `bsonType` alias names ("number": int, long, double, decimal); nullopt if unknown.
std::optional<TypeMask> bson_type_alias(std::string_view alias);
// The types a JSON Schema `type` names (object, array, number, boolean, string, null).
std::optional<TypeMask> json_type_alias(std::string_view alias);

// A number as a double (decimal128 through its string form); nullopt for other types. Only
// for counts (maxLength, ...): comparisons go through schema_numbers.h.
std::optional<double> number_of(const Value& v);
// Code points in UTF-8 text (what minLength/maxLength count).
uint64_t code_points(std::string_view text);
// Elements in a document or array.
uint32_t element_count(const Value& v);
// Equality as the server's $jsonSchema `enum` and `uniqueItems` compare: numbers by value
// across types, a Symbol as the String of its text, documents regardless of field order (their
// fields sorted by name), arrays in order, others byte for byte.
bool values_equal(const Value& a, const Value& b);
// A hash equal for values that are equal as above: a first sort key, never trusted alone.
uint64_t value_hash(const Value& v);
// The first element equal to an earlier one (the server's duplicatedValue: the later of the
// two), nullopt when all are distinct; O(n log n) comparisons for any array, as the server's
// ordered set.
std::optional<Value> first_duplicate(const Value& array);

// How the explain path builds one attempt on this thread, set by explain_within. The values it
// copies are bounded: a failing 15 MB document nested 20 levels deep would otherwise be copied
// once per level as each level's consideredValue.
struct ExplainBounds {
  size_t bytes_left = SIZE_MAX;  // values past this are not appended, and `exceeded` is set
  bool exceeded = false;
  // The server's truncated error: no specifiedAs (it grows with the validator) and no
  // consideredValue(s).
  bool truncated = false;
};
inline thread_local ExplainBounds explain_bounds;

// Appends `v` under `key` (explain path only), within explain_bounds.
void append_value(bson_t* parent, const char* key, const Value& v);

}  // namespace docguard::schema
