#include "docguard/advisor/catalog_documents.h"

#include <array>
#include <charconv>
#include <cmath>
#include <string_view>

#include "docguard/codec/bson_elements.h"

namespace docguard::advisor {
namespace {

// One option field of a create command, a collMod or a listCollections entry's options.
// Returns false for fields that are not about the collection's kind or validator.
bool apply_option(const codec::BsonElements& it, CollectionMetadata* out) {
  const std::string_view key = it.key;
  if (key == "validator" && it.holds_document()) {
    const codec::BsonView document = it.container();
    bson_t validator;
    // collMod with validator {} removes it.
    out->has_validator =
        bson_init_static(&validator, document.data, document.size) && !bson_empty(&validator);
    out->validator_json.clear();
    if (out->has_validator) {
      size_t json_length = 0;
      if (char* json = bson_as_relaxed_extended_json(&validator, &json_length)) {
        out->validator_json.assign(json, json_length);
        bson_free(json);
      }
    }
  } else if (key == "validationLevel") {
    out->validation_level = it.utf8();
  } else if (key == "validationAction") {
    out->validation_action = it.utf8();
  } else if (key == "capped") {
    out->capped = it.as_bool();
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

bool framed_document(const uint8_t* data, uint32_t size) {
  return data != nullptr && size >= 5 && codec::le32(data) == size && data[size - 1] == 0;
}

std::string index_key_text(const codec::BsonElements& value) {
  switch (value.type) {
    case BSON_TYPE_INT32:
      return std::to_string(value.int32());
    case BSON_TYPE_INT64:
      return std::to_string(value.int64());
    case BSON_TYPE_DOUBLE:
      return double_key_text(value.double_value());
    case BSON_TYPE_DECIMAL128: {
      const bson_decimal128_t decimal = value.decimal128();
      char text[BSON_DECIMAL128_STRING];
      bson_decimal128_to_string(&decimal, text);
      return text;
    }
    case BSON_TYPE_UTF8:
      return std::string(value.utf8());
    default:
      return "?";
  }
}

void read_index_document(const codec::BsonView& index, IndexSpec* out) {
  out->spec.assign(reinterpret_cast<const char*>(index.data), index.size);
  codec::BsonElements e(index);
  while (e.next()) {
    const std::string_view key = e.key;
    if (key == "name") {
      out->name = e.utf8();
    } else if (key == "key" && e.holds_document()) {
      codec::BsonElements fields(e.container());
      while (fields.next()) out->keys.emplace_back(fields.key, index_key_text(fields));
    } else if (key == "unique") {
      out->unique = e.as_bool();
    } else if (key == "sparse") {
      out->sparse = e.as_bool();
    } else if (key == "partialFilterExpression" && e.holds_document()) {
      out->partial = true;
    } else if (key == "expireAfterSeconds" && e.holds_number()) {
      out->expire_after_seconds = e.as_int64();
    } else if (key == "collation" && e.holds_document()) {
      out->collation = true;
    }
  }
}

bool read_index_spec(const uint8_t* data, uint32_t size, IndexSpec* out) {
  if (!framed_document(data, size)) return false;
  read_index_document(codec::BsonView{data, size}, out);
  return !out->keys.empty();
}

void read_collection_options(const codec::BsonView& options, CollectionMetadata* out) {
  codec::BsonElements e(options);
  while (e.next()) apply_option(e, out);
}

void apply_create_options(const uint8_t* data, uint32_t size, CollectionMetadata* out) {
  clear_options(out);
  if (!framed_document(data, size)) return;
  codec::BsonElements e(data, size);
  while (e.next()) apply_option(e, out);
}

void apply_collmod(const uint8_t* data, uint32_t size, CollectionMetadata* out) {
  if (!framed_document(data, size)) return;
  codec::BsonElements e(data, size);
  while (e.next()) {
    const std::string_view key = e.key;
    if (key == "validator" || key == "validationLevel" || key == "validationAction") {
      apply_option(e, out);
    }
    // A validator named here is known now, whatever was known of the options before.
    if (key == "validator") out->known = true;
  }
}

}  // namespace docguard::advisor
