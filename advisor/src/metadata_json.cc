// mongodump's <collection>.metadata.json (and the archive prelude's "metadata" string): canonical
// extended JSON with the collection's indexes and options. libbson parses extended JSON, so the
// index keys' {"$numberInt": "1"} arrive as plain numbers.
#include <bson/bson.h>

#include "docguard/advisor/dump_reader.h"

namespace docguard::advisor {
namespace {

std::string value_text(const bson_iter_t* it) {
  switch (bson_iter_type(it)) {
    case BSON_TYPE_INT32:
      return std::to_string(bson_iter_int32(it));
    case BSON_TYPE_INT64:
      return std::to_string(bson_iter_int64(it));
    case BSON_TYPE_DOUBLE:
      return std::to_string(static_cast<long long>(bson_iter_double(it)));
    case BSON_TYPE_UTF8: {
      uint32_t length = 0;
      const char* text = bson_iter_utf8(it, &length);
      return std::string(text, length);
    }
    default:
      return "?";
  }
}

void read_indexes(bson_iter_t* indexes, CollectionMetadata* out) {
  while (bson_iter_next(indexes)) {
    bson_iter_t index;
    if (!BSON_ITER_HOLDS_DOCUMENT(indexes) || !bson_iter_recurse(indexes, &index)) continue;
    IndexSpec spec;
    while (bson_iter_next(&index)) {
      const std::string_view key = bson_iter_key(&index);
      if (key == "name" && BSON_ITER_HOLDS_UTF8(&index)) {
        spec.name = value_text(&index);
      } else if (key == "key" && BSON_ITER_HOLDS_DOCUMENT(&index)) {
        bson_iter_t fields;
        if (!bson_iter_recurse(&index, &fields)) continue;
        while (bson_iter_next(&fields)) {
          spec.keys.emplace_back(bson_iter_key(&fields), value_text(&fields));
        }
      } else if (key == "unique") {
        spec.unique = bson_iter_as_bool(&index);
      } else if (key == "sparse") {
        spec.sparse = bson_iter_as_bool(&index);
      } else if (key == "partialFilterExpression") {
        spec.partial = BSON_ITER_HOLDS_DOCUMENT(&index);
      } else if (key == "collation") {
        spec.collation = BSON_ITER_HOLDS_DOCUMENT(&index);
      } else if (key == "expireAfterSeconds" && BSON_ITER_HOLDS_NUMBER(&index)) {
        spec.expire_after_seconds = bson_iter_as_int64(&index);
      }
    }
    out->indexes.push_back(std::move(spec));
  }
}

void read_options(bson_iter_t* options, CollectionMetadata* out) {
  while (bson_iter_next(options)) {
    if (std::string_view(bson_iter_key(options)) != "validator") continue;
    if (!BSON_ITER_HOLDS_DOCUMENT(options)) continue;
    uint32_t length = 0;
    const uint8_t* data = nullptr;
    bson_iter_document(options, &length, &data);
    bson_t validator;
    if (!bson_init_static(&validator, data, length) || bson_count_keys(&validator) == 0) continue;
    out->has_validator = true;
    size_t json_length = 0;
    char* json = bson_as_relaxed_extended_json(&validator, &json_length);
    if (json) {
      out->validator_json.assign(json, json_length);
      bson_free(json);
    }
  }
}

}  // namespace

bool parse_metadata_json(std::string_view json, CollectionMetadata* out, std::string* error) {
  bson_error_t bson_error;
  bson_t* doc = bson_new_from_json(reinterpret_cast<const uint8_t*>(json.data()),
                                   static_cast<ssize_t>(json.size()), &bson_error);
  if (!doc) {
    *error = std::string("metadata is not valid JSON: ") + bson_error.message;
    return false;
  }
  out->known = true;
  bson_iter_t it;
  bson_iter_init(&it, doc);
  while (bson_iter_next(&it)) {
    const std::string_view key = bson_iter_key(&it);
    bson_iter_t child;
    if (key == "indexes" && BSON_ITER_HOLDS_ARRAY(&it) && bson_iter_recurse(&it, &child)) {
      read_indexes(&child, out);
    } else if (key == "options" && BSON_ITER_HOLDS_DOCUMENT(&it) &&
               bson_iter_recurse(&it, &child)) {
      read_options(&child, out);
    } else if (key == "type" && BSON_ITER_HOLDS_UTF8(&it)) {
      out->type = value_text(&it);
    } else if (key == "collectionName" && BSON_ITER_HOLDS_UTF8(&it) && out->collection.empty()) {
      out->collection = value_text(&it);
    }
  }
  bson_destroy(doc);
  return true;
}

bool CollectionMetadata::indexed_as_prefix(std::string_view path) const {
  for (const IndexSpec& index : indexes) {
    if (!index.keys.empty() && index.keys.front().first == path) return true;
  }
  return false;
}

std::string ReadError::to_string() const {
  return file + ": at byte offset " + std::to_string(offset) +
         (inflated ? " of the inflated stream" : "") + ": " + message;
}

}  // namespace docguard::advisor
