// A collection's metadata from the cluster's own replies, as ClusterReader returns them (raw
// BSON): a listCollections entry, the listIndexes documents, the storage statistics ($collStats
// storageStats or the collStats command) and $indexStats. Each fails with a bad-input error when
// the reply is not the shape expected; what was filled before stays.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "docguard/advisor/collection_metadata.h"
#include "docguard/base/expected.h"

namespace docguard::advisor {

using BsonBytes = std::span<const uint8_t>;

// name -> collection, type, options.validator (has_validator, validator_json), validationLevel,
// validationAction, capped. Marks the metadata known.
base::Expected<void> apply_collection_entry(BsonBytes entry, CollectionMetadata* out);
// Replaces the index list: key, name, unique, sparse, partialFilterExpression,
// expireAfterSeconds, collation. Marks the indexes known.
base::Expected<void> apply_index_documents(const std::vector<std::vector<uint8_t>>& indexes,
                                           CollectionMetadata* out);
// count, size, avgObjSize, storageSize. Marks the statistics known.
base::Expected<void> apply_collection_stats(BsonBytes stats, CollectionMetadata* out);
// accesses.ops of each index, matched by name. Marks the index usage known.
base::Expected<void> apply_index_stats(const std::vector<std::vector<uint8_t>>& stats,
                                       CollectionMetadata* out);

}  // namespace docguard::advisor
