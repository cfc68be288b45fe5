// The shape of a query as an index sees it: which fields it matches by equality, which it sorts
// by and which it scans a range of. Two queries with the same shape need the same index, so the
// live advisor counts shapes per collection and the index detectors compare each frequent shape
// with the collection's indexes (detect_unindexed_queries).
//
// What a filter contributes (MongoDB's equality-sort-range guideline):
//   equality  {a: 5}, {a: {$eq: 5}}, {a: {$in: [..]}}, {a: {$all: [..]}}, {a: {b: 1}} (a whole
//             embedded document). $in counts as equality, as the guideline does for short lists.
//   range     $gt $gte $lt $lte $ne $nin $exists $type $mod $not $regex and a regex value: each
//             scans a stretch of the index (or all of it) rather than one key.
//   sort      the sort document's fields with direction 1 or -1, in order. Sort keys that are
//             also equality fields are dropped: one value sorts trivially. A sort with any other
//             value ({$meta: "textScore"}) is ignored whole.
//   $and      its clauses merge into one shape.
//   $elemMatch on documents contributes its fields under the array's path (items.sku); on values
//             ({$elemMatch: {$gt: 1}}) it counts as the operators on the field itself.
// What is left out, and named in `skipped`:
//   $or, $nor  each clause is planned on its own and needs its own index; one shape cannot say
//              which, so the clauses are not merged (the fields beside them still are).
//   $text, $where, $expr, $jsonSchema, geo operators ($near, $geoWithin, ...), $size
//              need a special index or cannot use one at all.
// A field with both an equality and a range condition counts as equality.
#pragma once

#include <bson/bson.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace docguard::rules {

struct SortKey {
  std::string field;
  int direction = 1;  // 1 or -1
};

struct QueryShape {
  std::vector<std::string> equality;  // dotted paths, sorted: their order in an index is free
  std::vector<SortKey> sort;          // in the sort document's order
  std::vector<std::string> range;     // dotted paths, sorted
  std::vector<std::string> skipped;   // operators left out ("$or", "$text"), sorted, once each

  bool empty() const { return equality.empty() && sort.empty() && range.empty(); }
  // The field an index should start with: the first equality field, else the first sort field,
  // else the first range field; "" for an empty shape.
  std::string first_field() const;
  // Stable text that identifies the shape, e.g. "eq: a, b; sort: c:-1; range: d". Operators in
  // `skipped` are not part of it: queries that differ only there need the same index.
  std::string key() const;
};

// The shape of a find's filter and sort (either may be null: no filter, no sort).
QueryShape query_shape(const bson_t* filter, const bson_t* sort);

// The shape of an aggregation pipeline's leading stages: the $match stages at its start (merged)
// and a $sort right after them. Only stages at the start of a pipeline can use an index, so a
// $match after a $group or $lookup is not part of the shape.
QueryShape pipeline_query_shape(const bson_t* pipeline);

// Index keys in order with their direction or type as text ("1", "-1", "text", "2dsphere",
// "hashed"), as listIndexes gives them.
using IndexKeys = std::vector<std::pair<std::string, std::string>>;

// Why a query would be a collection scan: the server's message differs.
enum class ScanReason : uint8_t { kNoIndex, kNaturalHint, kNaturalSort, kTailable };

// Whether the index with `keys` can serve the shape at all, by the server planner's rule as far
// as a shape tells it (the guardrail judges whole queries: query_guardrail.h): some equality or
// range field of the shape is the index's FIRST key, or the shape's sort is a prefix of the
// index's key pattern or of its reverse. Text and geo first keys do not serve ordinary
// predicates; a hashed first key serves only equality; a wildcard key ("$**", "a.$**") serves any
// field below it but no sort. Whether a compound index serves the whole shape (ESR order) is not
// asked: that is tuning, not a missing index. The design advisor's unindexed-query finding asks
// this.
bool index_serves(const QueryShape& shape, const IndexKeys& keys);

// The index for the shape in equality-sort-range order: equality fields ascending, the sort
// fields with their directions, then the range fields not already in the sort.
std::vector<std::pair<std::string, std::string>> suggest_index(const QueryShape& shape);

// The direction of an index key's type text: 1 or -1 for a number ("1", "-1", "1.0"), 0 for the
// named types ("text", "hashed", "2d", "2dsphere").
int index_key_direction(std::string_view type);

// Index keys as the shell writes them: {status: 1, createdAt: -1, "items.sku": 1}.
std::string index_keys_text(const std::vector<std::pair<std::string, std::string>>& keys);

}  // namespace docguard::rules
