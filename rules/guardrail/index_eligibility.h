// The planner model over one namespace's indexes; private to rules/guardrail/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "docguard/codec/bson_view.h"
#include "index_compatibility.h"
#include "planner_model.h"

namespace docguard::rules::planner {

class Planner {
 public:
  // `indexes` null: none known but _id's. `query_collation`: the command's (empty: none).
  Planner(const NamespaceIndexes* indexes, const codec::BsonView& query_collation);

  // Whether some index serves the conjunction `node` (the filter's root, or an $or branch).
  // Depth 0 is the query's root, which every partial filter is first checked against.
  Tri conjunction_served(const Predicate& node, int depth = 0,
                         bool partial_from_root = false) const;
  // Whether some index gives the sort's order with a whole-index scan.
  Tri sort_served(const Predicate& root, const codec::BsonView& sort) const;
  // The index a hint names (a name, or a key pattern), or null.
  const IndexModel* hinted(std::string_view name, const codec::BsonView& keys) const;
  // Whether some usable index has a field of this kind on `path` ("" any path).
  bool has_field(FieldKind kind, std::string_view path) const;

  const std::vector<IndexModel>& indexes() const { return indexes_; }
  Tri collation_with(const IndexModel& index) const;

 private:
  // indexes_[at]: whether it serves the conjunction `node`.
  Tri index_serves_and(size_t at, const Predicate& node,
                       const std::vector<const Predicate*>& related, bool partial_from_root) const;

  std::vector<IndexModel> indexes_;
  KnownIndex implicit_id_;  // {_id: 1} when the list does not name it
  codec::BsonView query_collation_;
  const std::string* collection_default_ = nullptr;  // the _id index's collation, when listed
  mutable const Predicate* root_ = nullptr;          // the query being judged
  // Per index (its place in indexes_), whether the root implies its partial filter, once per
  // query: asked again for each $or branch, it would cost branches x branches x indexes.
  mutable std::vector<std::optional<Tri>> root_implies_;
};

}  // namespace docguard::rules::planner
