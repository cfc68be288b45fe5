// The catalog's own documents read into CollectionMetadata: an index specification (listIndexes,
// createIndexes, a dump's metadata), collection options (listCollections, a dump's metadata),
// and the options of a create or a collMod command. The same fields arrive in each, so they are
// read in one place (cluster_metadata.h reads whole replies with these).
#pragma once

#include <bson/bson.h>

#include <cstdint>
#include <string>

#include "docguard/advisor/collection_metadata.h"

namespace docguard::advisor {

// A key's direction or type as text: "1", "-1", "text", "2dsphere", "hashed".
std::string index_key_text(const bson_iter_t* value);

// {key, name, unique, sparse, partialFilterExpression, expireAfterSeconds, collation}, iterating
// the index document's fields (listIndexes, createIndexes, a dump's metadata "indexes").
void read_index_document(bson_iter_t* index, IndexSpec* out);
// The same from bytes; false when it is not a document with a key.
bool read_index_spec(const uint8_t* data, uint32_t size, IndexSpec* out);
// Collection options as listCollections and a dump's metadata give them (validator,
// validationLevel, validationAction, capped, viewOn, timeseries), iterating the options.
void read_collection_options(bson_iter_t* options, CollectionMetadata* out);

// The options a `create` command gives (validator, validationLevel, validationAction, capped,
// viewOn, timeseries): a collection created without a validator has none.
void apply_create_options(const uint8_t* data, uint32_t size, CollectionMetadata* out);

// The validator changes of a `collMod` command; what it does not name stays as it was.
void apply_collmod(const uint8_t* data, uint32_t size, CollectionMetadata* out);

}  // namespace docguard::advisor
