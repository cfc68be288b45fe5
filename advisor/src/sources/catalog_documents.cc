#include "docguard/advisor/catalog_documents.h"

#include <array>
#include <charconv>
#include <cmath>
#include <string_view>

#include "docguard/codec/bson_view.h"

namespace docguard::advisor {
namespace {

// One option field of a create command, a collMod or a listCollections entry's options.
// Returns false for fields that are not about the collection's kind or validator.
bool apply_option(const bson_iter_t* it, CollectionMetadata* out) {
  const std::string_view key = bson_iter_key(it);
  if (key == "validator" && BSON_ITER_HOLDS_DOCUMENT(it)) {
    uint32_t length = 0;
    const uint8_t* data = nullptr;
    bson_iter_document(it, &length, &data);
    bson_t validator;
    // collMod with validator {} removes it.
    out->has_validator = bson_init_static(&validator, data, length) && !bson_empty(&validator);
    out->validator_json.clear();
    if (out->has_validator) {
      size_t json_length = 0;
      if (char* json = bson_as_relaxed_extended_json(&validator, &json_length)) {
        out->validator_json.assign(json, json_length);
        bson_free(json);
      }
    }
  } else if (key == "validationLevel") {
    out->validation_level = codec::utf8_of(it);
  } else if (key == "validationAction") {
    out->validation_action = codec::utf8_of(it);
  } else if (key == "capped") {
    out->capped = bson_iter_as_bool(it);
  } else if (key == "viewOn") {
    out->type = "view";
  } else if (key == "timeseries") {
    out->type = "timeseries";
  } else {
    return false;
  }
  return true;
}

void clear_options(CollectionMetadata* out) {
  out->has_validator = false;
  out->validator_json.clear();
  out->validation_level.clear();
  out->validation_action.clear();
  out->capped = false;
  out->type = "collection";
}

// A key pattern's double as the shell shows it: 1 for 1.0, 1.5 for 1.5, NaN, Infinity. Any
// double can arrive here (a listIndexes reply, a dump's metadata, a fleet's shared facts), and a
// cast of one outside long long's range is undefined, so only whole numbers that a double holds
// exactly are written as integers.
std::string double_key_text(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
  if (value == std::trunc(value) && std::fabs(value) < kExactIntegers) {
    return std::to_string(static_cast<long long>(value));
  }
  std::array<char, 32> text{};
  const auto written = std::to_chars(text.data(), text.data() + text.size(), value);
  return std::string(text.data(), written.ptr);
}

}  // namespace

std::string index_key_text(const bson_iter_t* value) {
  switch (bson_iter_type(value)) {
    case BSON_TYPE_INT32:
      return std::to_string(bson_iter_int32(value));
    case BSON_TYPE_INT64:
      return std::to_string(bson_iter_int64(value));
    case BSON_TYPE_DOUBLE:
      return double_key_text(bson_iter_double(value));
    case BSON_TYPE_DECIMAL128: {
      bson_decimal128_t decimal;
      if (!bson_iter_decimal128(value, &decimal)) return "?";
      char text[BSON_DECIMAL128_STRING];
      bson_decimal128_to_string(&decimal, text);
      return text;
    }
    case BSON_TYPE_UTF8:
      return std::string(codec::utf8_of(value));
    default:
      return "?";
  }
}

void read_index_document(bson_iter_t* index, IndexSpec* out) {
  // The iterator starts at the document's first element: `raw` and `len` are the document.
  out->spec.assign(reinterpret_cast<const char*>(index->raw), index->len);
  while (bson_iter_next(index)) {
    const std::string_view key = bson_iter_key(index);
    if (key == "name") {
      out->name = codec::utf8_of(index);
    } else if (key == "key" && BSON_ITER_HOLDS_DOCUMENT(index)) {
      bson_iter_t fields;
      if (!bson_iter_recurse(index, &fields)) continue;
      while (bson_iter_next(&fields)) {
        out->keys.emplace_back(bson_iter_key(&fields), index_key_text(&fields));
      }
    } else if (key == "unique") {
      out->unique = bson_iter_as_bool(index);
    } else if (key == "sparse") {
      out->sparse = bson_iter_as_bool(index);
    } else if (key == "partialFilterExpression" && BSON_ITER_HOLDS_DOCUMENT(index)) {
      out->partial = true;
    } else if (key == "expireAfterSeconds" && BSON_ITER_HOLDS_NUMBER(index)) {
      out->expire_after_seconds = bson_iter_as_int64(index);
    } else if (key == "collation" && BSON_ITER_HOLDS_DOCUMENT(index)) {
      out->collation = true;
    }
  }
}

bool read_index_spec(const uint8_t* data, uint32_t size, IndexSpec* out) {
  bson_iter_t it;
  if (data == nullptr || !bson_iter_init_from_data(&it, data, size)) return false;
  read_index_document(&it, out);
  return !out->keys.empty();
}

void read_collection_options(bson_iter_t* options, CollectionMetadata* out) {
  while (bson_iter_next(options)) apply_option(options, out);
}

void apply_create_options(const uint8_t* data, uint32_t size, CollectionMetadata* out) {
  bson_iter_t it;
  clear_options(out);
  if (data == nullptr || !bson_iter_init_from_data(&it, data, size)) return;
  while (bson_iter_next(&it)) apply_option(&it, out);
}

void apply_collmod(const uint8_t* data, uint32_t size, CollectionMetadata* out) {
  bson_iter_t it;
  if (data == nullptr || !bson_iter_init_from_data(&it, data, size)) return;
  while (bson_iter_next(&it)) {
    const std::string_view key = bson_iter_key(&it);
    if (key == "validator" || key == "validationLevel" || key == "validationAction") {
      apply_option(&it, out);
    }
    // A validator named here is known now, whatever was known of the options before.
    if (key == "validator") out->known = true;
  }
}

}  // namespace docguard::advisor
