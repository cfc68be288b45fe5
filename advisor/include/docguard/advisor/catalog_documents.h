// The catalog's own documents read into CollectionMetadata: an index specification (listIndexes,
// createIndexes, a dump's metadata), collection options (listCollections, a dump's metadata),
// and the options of a create or a collMod command. The same fields arrive in each, so they are
// read in one place (cluster_metadata.h reads whole replies with these).
#pragma once

#include <bson/bson.h>

#include <cstdint>
#include <string>

#include "docguard/advisor/collection_metadata.h"
#include "docguard/codec/bson_elements.h"

namespace docguard::advisor {

// Whether `data`, `size` is framed as a document (length prefix, trailing NUL): the check
// libbson's iterator made before it walked, kept where a caller's bytes were not checked.
bool framed_document(const uint8_t* data, uint32_t size);

// A key's direction or type as text: "1", "-1", "text", "2dsphere", "hashed".
std::string index_key_text(const codec::BsonElements& value);

// {key, name, unique, sparse, partialFilterExpression, expireAfterSeconds, collation} of an
// index document (listIndexes, createIndexes, a dump's metadata "indexes").
void read_index_document(const codec::BsonView& index, IndexSpec* out);
// The same from bytes; false when it is not a document with a key.
bool read_index_spec(const uint8_t* data, uint32_t size, IndexSpec* out);
// Collection options as listCollections and a dump's metadata give them (validator,
// validationLevel, validationAction, capped, viewOn, timeseries).
void read_collection_options(const codec::BsonView& options, CollectionMetadata* out);

// The options a `create` command gives (validator, validationLevel, validationAction, capped,
// viewOn, timeseries): a collection created without a validator has none.
void apply_create_options(const uint8_t* data, uint32_t size, CollectionMetadata* out);

// The validator changes of a `collMod` command; what it does not name stays as it was.
void apply_collmod(const uint8_t* data, uint32_t size, CollectionMetadata* out);

}  // namespace docguard::advisor
