// The design advisor's view of query shapes: the shape itself and the "can an index serve it"
// rule live in the rules layer (docguard/rules/query_shape.h), shared with the query guardrail;
// here are the advisor's collection-level question and its bounded counter of shapes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "docguard/advisor/collection_metadata.h"
#include "docguard/rules/query_shape.h"

namespace docguard::advisor {

using rules::index_key_direction;
using rules::index_keys_text;
using rules::pipeline_query_shape;
using rules::query_shape;
using rules::QueryShape;
using rules::SortKey;
using rules::suggest_index;

// Whether some index of the collection can serve the shape (rules::index_serves). An index that
// might serve counts as serving: a finding says an index is missing, so doubtful cases (a partial
// or sparse index whose filter the query may match, an index with its own collation) go the
// quiet way.
bool supported_by(const QueryShape& shape, const std::vector<IndexSpec>& indexes);

// Counts queries per shape for one collection, with a bound on the distinct shapes kept: a shape
// first seen when the counter is full is only counted in overflow(). Not thread-safe: the owner
// holds its own lock.
class QueryShapeCounter {
 public:
  struct Entry {
    QueryShape shape;
    uint64_t count = 0;
  };

  explicit QueryShapeCounter(size_t max_shapes) : max_shapes_(max_shapes) {}

  // Counts `times` queries of `shape`. Empty shapes (no filter fields, no sort: a scan by
  // design) are not counted; false when the shape was empty or did not fit.
  bool record(const QueryShape& shape, uint64_t times = 1);

  const std::map<std::string, Entry>& shapes() const { return shapes_; }  // by QueryShape::key()
  uint64_t overflow() const { return overflow_; }  // queries of shapes that did not fit
  size_t max_shapes() const { return max_shapes_; }

 private:
  size_t max_shapes_;
  std::map<std::string, Entry> shapes_;
  uint64_t overflow_ = 0;
};

}  // namespace docguard::advisor
