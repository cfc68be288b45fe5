// mongodump's <collection>.metadata.json (and the archive prelude's "metadata" string): canonical
// extended JSON with the collection's indexes and options, in the shapes listIndexes and
// listCollections give them (mongodump copies those replies). libbson parses extended JSON, so
// the index keys' {"$numberInt": "1"} arrive as plain numbers.
#include <bson/bson.h>

#include "docguard/advisor/catalog_documents.h"
#include "docguard/advisor/dump_reader.h"

namespace docguard::advisor {

base::Expected<void> parse_metadata_json(std::string_view json, CollectionMetadata* out) {
  bson_error_t bson_error;
  bson_t* doc = bson_new_from_json(reinterpret_cast<const uint8_t*>(json.data()),
                                   static_cast<ssize_t>(json.size()), &bson_error);
  if (!doc)
    return base::bad_input(std::string("metadata is not valid JSON: ") + bson_error.message);
  out->known = true;
  codec::BsonElements it(doc);
  while (it.next()) {
    const std::string_view key = it.key;
    if (key == "indexes" && it.holds_array()) {
      codec::BsonElements child(it.container());
      while (child.next()) {
        if (!child.holds_document()) continue;
        IndexSpec spec;
        read_index_document(child.container(), &spec);
        out->indexes.push_back(std::move(spec));
      }
    } else if (key == "options" && it.holds_document()) {
      read_collection_options(it.container(), out);
    } else if (key == "type" && it.holds_utf8()) {
      out->type = it.utf8();
    } else if (key == "collectionName" && it.holds_utf8() && out->collection.empty()) {
      out->collection = it.utf8();
    }
  }
  bson_destroy(doc);
  return {};
}

bool CollectionMetadata::indexed_as_prefix(std::string_view path) const {
  for (const IndexSpec& index : indexes) {
    if (!index.keys.empty() && index.keys.front().first == path) return true;
  }
  return false;
}

std::string ReadError::to_string() const {
  if (whole_file) return file + ": " + message;
  return file + ": at byte offset " + std::to_string(offset) +
         (inflated ? " of the inflated stream" : "") + ": " + message;
}

}  // namespace docguard::advisor
