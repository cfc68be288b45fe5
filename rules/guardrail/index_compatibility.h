// One predicate against one field of one index (the server's planner_ixselect compatibility
// test); private to rules/guardrail/.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "planner_model.h"

namespace docguard::rules::planner {

struct CompatibilityContext {
  Tri collation_match = Tri::kYes;  // the query's collation against the index's
  bool under_not = false;
  bool in_elem_match_value = false;
  std::string_view full_path;  // the predicate's path
};

// Whether the predicate generates index bounds on its own field (the planner's "sargable").
bool bounds_generating(const Predicate& p);

// The path a bounds-generating predicate constrains (a negation's child's).
std::string_view predicate_path(const Predicate& p);

// Whether `p`, on the path of the index's key field `field`, can use that field.
Tri compatible(const Predicate& p, const IndexModel& index, size_t field,
               const CompatibilityContext& ctx);

}  // namespace docguard::rules::planner
