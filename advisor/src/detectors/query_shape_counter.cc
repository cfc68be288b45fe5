// The advisor's side of query shapes: whether a collection's indexes serve one (the rule itself
// is rules::index_serves, shared with the query guardrail) and the bounded counter of shapes.
#include <algorithm>

#include "docguard/advisor/query_shape.h"

namespace docguard::advisor {

bool supported_by(const QueryShape& shape, const std::vector<IndexSpec>& indexes) {
  return std::any_of(indexes.begin(), indexes.end(), [&](const IndexSpec& index) {
    return rules::index_serves(shape, index.keys);
  });
}

bool QueryShapeCounter::record(const QueryShape& shape, uint64_t times) {
  if (shape.empty()) return false;
  std::string key = shape.key();
  auto it = shapes_.find(key);
  if (it != shapes_.end()) {
    it->second.count += times;
    return true;
  }
  if (shapes_.size() >= max_shapes_) {
    overflow_ += times;
    return false;
  }
  shapes_.emplace(std::move(key), Entry{shape, times});
  return true;
}

}  // namespace docguard::advisor
