// What one docguard of a fleet learned of a collection by reading the cluster, in a form it
// stores in the cluster itself, so the other instances report the same facts without reading
// the cluster themselves (the introspection lease).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "docguard/advisor/collection_metadata.h"
#include "docguard/advisor/finding.h"

namespace docguard::advisor {

struct SharedCollection {
  CollectionMetadata metadata;
  std::vector<Finding> findings;  // what the sampled documents showed (source "sample")
  uint64_t sampled_documents = 0;
  double read_at = 0;  // Unix seconds
};

// {_id: "db.collection", metadata: {...}, findings: [...], sampled_documents, read_at}.
std::vector<uint8_t> shared_collection_bson(const SharedCollection& shared);
// A bad-input error when the document is not one shared_collection_bson wrote.
base::Expected<void> read_shared_collection(const uint8_t* data, uint32_t size,
                                            SharedCollection* out);

}  // namespace docguard::advisor
