// The catalog's own documents read into CollectionMetadata: an index specification (listIndexes,
// createIndexes, a dump's metadata), a listCollections entry, and the options of a create or a
// collMod command. The same fields arrive in each, so they are read in one place.
#pragma once

#include <bson/bson.h>

#include <cstdint>
#include <string>

#include "docguard/advisor/collection_metadata.h"

namespace docguard::advisor {

// A key's direction or type as text: "1", "-1", "text", "2dsphere", "hashed".
std::string index_key_text(const bson_iter_t* value);

// {key, name, unique, sparse, partialFilterExpression, expireAfterSeconds, collation}; false
// when it is not a document with a key.
bool read_index_spec(const uint8_t* data, uint32_t size, IndexSpec* out);

// A listCollections entry {name, type, options: {...}}: sets collection, type, known and the
// options' facts (a validator that is not there is a known absence).
bool apply_collection_info(const uint8_t* data, uint32_t size, CollectionMetadata* out);

// The options a `create` command gives (validator, validationLevel, validationAction, capped,
// viewOn, timeseries): a collection created without a validator has none.
void apply_create_options(const uint8_t* data, uint32_t size, CollectionMetadata* out);

// The validator changes of a `collMod` command; what it does not name stays as it was.
void apply_collmod(const uint8_t* data, uint32_t size, CollectionMetadata* out);

}  // namespace docguard::advisor
