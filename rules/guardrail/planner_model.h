// The parts of the server's query planner the guardrail models: a filter as the planner's match
// expression tree sees it (which predicate, on which path, against what kind of operand), and an
// index as the planner's index entry describes it (type, fields, sparse, partial, collation).
// docs/guardrail.md states the rules and where in the server they come from; this header is
// private to rules/guardrail/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/codec/bson_view.h"
#include "docguard/rules/index_catalog.h"

namespace docguard::rules::planner {

// Whether an index can serve a predicate: kMaybe when the answer depends on what listIndexes
// does not say (whether a path holds arrays, the collection's default collation) or on a rule
// not modelled. kMaybe never refuses.
enum class Tri : uint8_t { kNo, kMaybe, kYes };

inline Tri best(Tri a, Tri b) { return a > b ? a : b; }
inline Tri worst(Tri a, Tri b) { return a < b ? a : b; }

// The match expression kinds the planner tells apart (its MatchType), as far as index use goes.
enum class Op : uint8_t {
  kEq,
  kLt,
  kLte,
  kGt,
  kGte,
  kRegex,
  kMod,
  kIn,
  kType,
  kExists,
  kGeoWithin,
  kGeoIntersects,
  kNear,
  kText,
  kExprEq,           // {$expr: {$eq: ["$path", <constant>]}}: the server adds $_internalExprEq
  kExprCmp,          // the same for $gt, $gte, $lt, $lte
  kNot,              // one child
  kElemMatchValue,   // children: operators on the array's elements themselves
  kElemMatchObject,  // children: predicates on fields of the array's documents
  kAnd,
  kOr,
  kNor,
  kUnindexable,  // matches documents, but no index can ($where, $size, $bits*, $jsonSchema)
};

struct Predicate {
  Op op = Op::kUnindexable;
  // The full dotted path (an $elemMatch's prefix included); "" for logic. Held by the
  // ParsedFilter (its `paths`), which outlives its predicates.
  std::string_view path;

  // The operand, for the comparisons (kEq ... kGte, kExpr*): its BSON type and value bytes.
  uint8_t operand_type = 0;
  const uint8_t* operand = nullptr;
  uint32_t operand_size = 0;

  bool null_operand = false;        // a comparison with null, or an $in listing null
  bool array_operand = false;       // a comparison with an array, or an $in listing one
  bool object_operand = false;      // a comparison with a document, or an $in listing one
  bool collatable_operand = false;  // strings, symbols, arrays or documents are compared
  bool in_regex = false;            // an $in listing a regular expression
  bool in_empty_array = false;      // an $in listing []
  size_t in_count = 0;              // an $in's number of values
  bool legacy_shape = false;        // $geoWithin: $box, $polygon, $center (flat)
  bool center_sphere = false;       // $geoWithin: $centerSphere
  bool min_max_bound = false;       // a comparison with MinKey or MaxKey
  bool nonempty_container = false;  // compares with (or lists) a non-empty array or document
  bool spherical = false;           // $nearSphere, or $near with a GeoJSON point

  std::vector<Predicate> children;
};

struct ParsedFilter {
  Predicate root;             // an kAnd of the filter's top level
  bool uncertain = false;     // something the model does not cover: never refused
  bool text = false;          // $text somewhere
  bool near = false;          // $near / $nearSphere / $geoNear somewhere
  bool always_false = false;  // {$alwaysFalse: 1}: an empty-result plan, whatever else
  std::string_view near_path;
  // The predicates' paths, each stored once (a unique_ptr each: moving the filter keeps them).
  std::vector<std::unique_ptr<std::string>> paths;
};

// The filter as the server parses it into a match expression. Bounded: past `max_nodes`
// predicates or 32 levels of nesting the rest is not read and the filter is `uncertain`.
ParsedFilter parse_filter(const codec::BsonView& filter, size_t max_nodes = 4096);
// Several filters ANDed (an aggregation's $match stages merged), in one budget.
ParsedFilter parse_filters(const std::vector<codec::BsonView>& filters, size_t max_nodes = 4096);

// The planner's index types (IndexNames): decided by the first special field of the pattern.
enum class IndexType : uint8_t { kBtree, kHashed, k2d, k2dsphere, kText, kWildcard };

// What one key field is: an ordered field, or a special one.
enum class FieldKind : uint8_t { kOrdered, kHashed, k2d, k2dsphere, kText, kWildcard };

struct IndexModel {
  const KnownIndex* known = nullptr;
  IndexType type = IndexType::kBtree;
  std::vector<std::pair<std::string, FieldKind>> fields;  // text indexes: prefix fields + "_fts"
  bool sparse = false;
};

IndexModel model_of(const KnownIndex& index);

// A BsonView of bytes held in a string (empty string: an empty view).
inline codec::BsonView view_of_bytes(const std::string& bytes) {
  if (bytes.empty()) return {};
  return {reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<uint32_t>(bytes.size())};
}

// Whether a query with collation `query` (empty: the collection's default) and an index with
// collation `index` (empty: simple) compare strings alike. `collection_default`: the collection's
// default collation when known (the _id index's), or null.
Tri collations_match(const codec::BsonView& query, const codec::BsonView& index,
                     const std::string* collection_default);

// Whether every document the query's top-level conjunction matches also matches an index's
// partialFilterExpression (the planner's isSubsetOf, for the cases it can prove). kNo when a
// filter condition's path has no condition in the query, or only conditions that decidably do
// not imply it (numbers against numbers, negations, expression comparisons).
Tri implies_partial_filter(const Predicate& query_and, const codec::BsonView& partial_filter);

}  // namespace docguard::rules::planner
