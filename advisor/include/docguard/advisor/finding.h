// One piece of advice about one collection: what was measured, which threshold it crossed, the
// design guide's pattern that fixes it and a concrete suggestion naming the fields.
#pragma once

#include <string>
#include <vector>

namespace docguard::advisor {

enum class Severity { kInfo, kWarn, kBlock };
const char* severity_name(Severity severity);  // "info", "warn", "block"
bool parse_severity(std::string_view text, Severity* out);

// Kinds, as stable strings (they become metric labels and JSON values).
namespace kind {
inline constexpr const char* kLargeArray = "large_array";
inline constexpr const char* kOutlier = "outlier";
inline constexpr const char* kBucket = "bucket";
inline constexpr const char* kBloatedDocuments = "bloated_documents";
inline constexpr const char* kAttribute = "attribute";
inline constexpr const char* kUnindexedReference = "unindexed_reference";
inline constexpr const char* kTooManyIndexes = "too_many_indexes";
inline constexpr const char* kTooManyCollections = "too_many_collections";
inline constexpr const char* kDeepNesting = "deep_nesting";
inline constexpr const char* kNoValidator = "no_validator";
inline constexpr const char* kUnindexedQuery = "unindexed_query";
inline constexpr const char* kRedundantIndex = "redundant_index";
inline constexpr const char* kUnusedIndex = "unused_index";
inline constexpr const char* kSameShapeCollections = "same_shape_collections";
}  // namespace kind

struct Finding {
  std::string db;
  // Empty for database-wide findings (too many collections, collections of one shape); db is
  // empty too for a deployment-wide one (too many collections in all databases).
  std::string collection;
  std::string kind;
  Severity severity = Severity::kInfo;
  std::string field;       // the field path concerned, when there is one
  std::string evidence;    // measured numbers and the threshold crossed
  std::string pattern;     // the guide's pattern to apply
  std::string suggestion;  // one paragraph naming fields
  // What the finding rests on: "dump" (a mongodump), "sample" (documents docguard read from the
  // cluster), "metadata" (the cluster's indexes, options and statistics) or "traffic".
  std::string source = "dump";
  // For traffic findings: the client apps (their appName, as the proxy's counters label them)
  // whose sampled commands on the collection showed it, most first. Empty for other sources.
  std::vector<std::string> apps;
};

// Database, collection, kind, field: a stable order whatever order the dump was read in.
void sort_findings(std::vector<Finding>& findings);

}  // namespace docguard::advisor
