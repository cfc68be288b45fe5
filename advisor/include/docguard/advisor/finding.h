// One piece of advice about one collection: what was measured, which threshold it crossed, the
// design guide's pattern that fixes it and a concrete suggestion naming the fields.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/base/enum_names.h"
#include "docguard/rules/collection_stats.h"

namespace docguard::advisor {

enum class Severity { kInfo, kWarn, kBlock };
const char* severity_name(Severity severity);  // "info", "warn", "block"
bool parse_severity(std::string_view text, Severity* out);

struct Finding {
  // What the finding is about. Its name (kind_name) is what reports, metric labels and the facts
  // shared with other instances show, so a name never changes once released.
  enum class Kind {
    // From profiles: a dump, a sample or the cluster's metadata.
    kLargeArray,
    kOutlier,
    kBucket,
    kBloatedDocuments,
    kAttribute,
    kUnindexedReference,
    kTooManyIndexes,
    kTooManyCollections,
    kDeepNesting,
    kNoValidator,
    kUnindexedQuery,
    kRedundantIndex,
    kUnusedIndex,
    kSameShapeCollections,
    // From traffic (the live advisor).
    kUnboundedArray,
    kJoinHeavy,
    kComputed,
    kCaseInsensitiveRegex,
    kSubset,
    kValidatorNotEnforced,
    kApproachingLimit,
    // A rule of the proxy's that a scanned dump breaks (rule_findings.h): kRuleFirst plus the
    // rule's RuleKind, named by the rule table's row ("rule:max_document_bytes"), so a new rule
    // kind needs no kind here.
    kRuleFirst,
  };

  std::string db;
  // Empty for database-wide findings (too many collections, collections of one shape); db is
  // empty too for a deployment-wide one (too many collections in all databases).
  std::string collection;
  Kind kind = Kind::kLargeArray;
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

inline constexpr auto kFindingKindNames = base::enum_names<Finding::Kind>(
    {{Finding::Kind::kLargeArray, "large_array"},
     {Finding::Kind::kOutlier, "outlier"},
     {Finding::Kind::kBucket, "bucket"},
     {Finding::Kind::kBloatedDocuments, "bloated_documents"},
     {Finding::Kind::kAttribute, "attribute"},
     {Finding::Kind::kUnindexedReference, "unindexed_reference"},
     {Finding::Kind::kTooManyIndexes, "too_many_indexes"},
     {Finding::Kind::kTooManyCollections, "too_many_collections"},
     {Finding::Kind::kDeepNesting, "deep_nesting"},
     {Finding::Kind::kNoValidator, "no_validator"},
     {Finding::Kind::kUnindexedQuery, "unindexed_query"},
     {Finding::Kind::kRedundantIndex, "redundant_index"},
     {Finding::Kind::kUnusedIndex, "unused_index"},
     {Finding::Kind::kSameShapeCollections, "same_shape_collections"},
     {Finding::Kind::kUnboundedArray, "unbounded_array"},
     {Finding::Kind::kJoinHeavy, "join_heavy"},
     {Finding::Kind::kComputed, "computed"},
     {Finding::Kind::kCaseInsensitiveRegex, "case_insensitive_regex"},
     {Finding::Kind::kSubset, "subset"},
     {Finding::Kind::kValidatorNotEnforced, "validator_not_enforced"},
     {Finding::Kind::kApproachingLimit, "approaching_limit"}},
    "?");
// A kind's name, the rule kinds' from their rows; "?" for a value past them.
const char* kind_name(Finding::Kind kind);
// The kind named `name` exactly, or nullopt (a newer instance's kind, read from shared facts).
std::optional<Finding::Kind> finding_kind_named(std::string_view name);

// The kind of a finding about a broken rule; none for a kind no stored document can break.
std::optional<Finding::Kind> rule_finding_kind(rules::RuleKind rule);

// Database, collection, kind, field: a stable order whatever order the dump was read in.
void sort_findings(std::vector<Finding>& findings);

}  // namespace docguard::advisor
