// The parts of a collection's metadata that a dump's metadata.json and the cluster's replies
// share: an index document (listIndexes, metadata.json "indexes") and a collection's options
// (listCollections "options", metadata.json "options").
#pragma once

#include <bson/bson.h>

#include "docguard/advisor/collection_metadata.h"

namespace docguard::advisor {

// Reads one index document (iterating its fields) into `out`.
void read_index_document(bson_iter_t* index, IndexSpec* out);
// Reads collection options (validator, validationLevel, validationAction, capped).
void read_collection_options(bson_iter_t* options, CollectionMetadata* out);

}  // namespace docguard::advisor
