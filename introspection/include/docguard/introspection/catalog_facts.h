// What docguard knows of a collection's indexes, handed to the query guardrail's catalog the
// same way whether an introspection pass read it from the cluster or a mongodump holds it
// (`docguard whatif --facts-from`): a view or time-series collection is planned against another
// collection's indexes, and a collection whose indexes could not be read stays unknown.
#pragma once

#include <string>
#include <string_view>

#include "docguard/base/expected.h"
#include "docguard/rules/engine.h"

namespace docguard::advisor {
struct CollectionMetadata;
}

namespace docguard::introspection {

// One collection's indexes, kind and whether they are known, into the engine's index catalog;
// `source` is where the catalog says they came from (its /status).
void learn_indexes(rules::Engine& engine, const advisor::CollectionMetadata& metadata,
                   std::string_view source = "introspection");

// Every collection of the mongodump at `path` (any layout `docguard scan` reads) into the
// engine's index catalog, as an introspection pass would have. Documents are not read for
// their array lengths: a pass samples them, a dump holds all, and the two would judge a `$push`
// differently.
base::Expected<void> learn_indexes_from_dump(const std::string& path, rules::Engine& engine);

// The same from a live cluster (mongodb:// or mongodb+srv://), read as an introspection pass
// reads it: its own connections, a secondary when there is one, paced, listCollections and
// listIndexes of every collection (one sampled document each at most; no statistics).
base::Expected<void> learn_indexes_from_cluster(const std::string& uri, rules::Engine& engine);

// Whether `facts_from` names a cluster rather than a dump.
bool names_a_cluster(std::string_view facts_from);

}  // namespace docguard::introspection
