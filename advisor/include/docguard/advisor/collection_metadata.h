// What is known about one collection besides its documents: its kind, options, validator, indexes
// and the server's statistics. A dump's metadata.json fills it, and so do the cluster's own
// listCollections, listIndexes, $collStats and $indexStats replies (the live scan and the proxy's
// introspection), and commands seen in traffic. Each fact says whether it is known: a fact that
// could not be read (no rights, an old server) is unknown, never taken as absent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "docguard/base/expected.h"

namespace docguard::advisor {

struct IndexSpec {
  std::string name;
  // Key fields in order with their direction or type as text ("1", "-1", "text", "2dsphere").
  std::vector<std::pair<std::string, std::string>> keys;
  bool unique = false;
  bool sparse = false;
  bool partial = false;                                        // has a partialFilterExpression
  std::optional<int64_t> expire_after_seconds = std::nullopt;  // a TTL index
  bool collation = false;                                      // has its own collation
  std::optional<uint64_t> accesses = std::nullopt;  // $indexStats accesses.ops, when read
  // The specification document's bytes as listIndexes gave it: the query guardrail reads the
  // options that decide which queries the index can serve (sparse, partial filter, collation).
  std::string spec = {};
};

// The server's statistics of a collection ($collStats storageStats, or the collStats command).
struct CollectionStatsFacts {
  bool known = false;
  uint64_t documents = 0;
  uint64_t size_bytes = 0;  // uncompressed data size
  uint64_t average_document_bytes = 0;
  uint64_t storage_bytes = 0;
};

struct CollectionMetadata {
  std::string db;
  std::string collection;
  bool known = false;  // false: neither the dump nor the cluster said anything of this collection
  std::string type;    // "collection", "view", "timeseries"
  bool capped = false;
  // The indexes; meaningful only while indexes_known (listIndexes may be refused).
  std::vector<IndexSpec> indexes;
  bool indexes_known = true;
  bool index_usage_known = false;  // IndexSpec::accesses filled from $indexStats
  bool has_validator = false;
  std::string validator_json;     // relaxed extended JSON of options.validator
  std::string validation_level;   // "strict" (the server's default), "moderate", "off"
  std::string validation_action;  // "error" (the server's default), "warn"
  CollectionStatsFacts stats;
  // Where these facts come from: "dump", "cluster" (docguard's own reads) or "traffic".
  std::string source = "dump";
  // How the documents were read from a cluster: "$sample", "find" (the server has no $sample),
  // "all" (every document, as mongodump reads); empty for a dump.
  std::string sample_method;
  // Facts that could not be read and why, one line each ("indexes: not authorized (code 13)").
  std::vector<std::string> unknown;

  bool is_view() const { return type == "view"; }
  bool is_timeseries() const { return type == "timeseries"; }
  // Whether an index's leading keys cover `path` (it is the first key of some index).
  bool indexed_as_prefix(std::string_view path) const;
};

// Parses a collection's metadata as mongodump writes it (metadata.json, or the archive prelude's
// metadata string); a bad-input error when it is not that JSON.
base::Expected<void> parse_metadata_json(std::string_view json, CollectionMetadata* out);

}  // namespace docguard::advisor
