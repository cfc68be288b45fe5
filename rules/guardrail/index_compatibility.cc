// Whether one predicate can use one field of one index: the server's index selection
// (planner_ixselect's compatibility test, Indexability's list of sargable predicates), with the
// answers that depend on multikey paths or unknown collations left as kMaybe.
#include "index_compatibility.h"

#include <string>
#include <string_view>

namespace docguard::rules::planner {

namespace {

bool is_comparison(Op op) {
  return op == Op::kEq || op == Op::kLt || op == Op::kLte || op == Op::kGt || op == Op::kGte;
}

bool is_expr(Op op) { return op == Op::kExprEq || op == Op::kExprCmp; }

// The predicate kinds that generate index bounds on their own field.
bool own_field_type(const Predicate& p) {
  switch (p.op) {
    case Op::kEq:
    case Op::kLt:
    case Op::kLte:
    case Op::kGt:
    case Op::kGte:
    case Op::kRegex:
    case Op::kMod:
    case Op::kIn:
    case Op::kType:
    case Op::kExists:
    case Op::kGeoWithin:
    case Op::kGeoIntersects:
    case Op::kNear:
    case Op::kText:
    case Op::kExprEq:
    case Op::kExprCmp:
      return true;
    default:
      return false;
  }
}

// An $elemMatch on values uses an index on its own field when every one of its operators does
// (a negated $mod, $regex or $type does not).
bool elem_match_value_indexable(const Predicate& p) {
  if (p.children.empty()) return false;
  for (const Predicate& c : p.children) {
    if (c.op == Op::kNot) {
      if (c.children.empty()) return false;
      const Op inner = c.children.front().op;
      if (inner == Op::kMod || inner == Op::kRegex || inner == Op::kType) return false;
      if (!own_field_type(c.children.front())) return false;
    } else if (!own_field_type(c)) {
      return false;
    }
  }
  return true;
}

bool can_use_index_on_own_field(const Predicate& p) {
  if (p.path.empty()) return false;
  if (p.op == Op::kElemMatchValue) return elem_match_value_indexable(p);
  return own_field_type(p);
}

bool cannot_use_index_under_not(Op op) {
  return op == Op::kRegex || op == Op::kMod || op == Op::kType || op == Op::kElemMatchValue ||
         op == Op::kGeoWithin || op == Op::kGeoIntersects || op == Op::kNear;
}

// A sparse index holds no key for a document without the field: it cannot answer what matches
// missing fields (equality to null, {$exists: false}, any negation but {$ne: null}).
bool sparse_supports(const Predicate& p, bool in_elem_match_value) {
  if (p.op == Op::kEq || p.op == Op::kGte || p.op == Op::kLte) {
    return in_elem_match_value || !p.null_operand;
  }
  if (p.op == Op::kIn) return in_elem_match_value || !p.null_operand;
  if (p.op == Op::kNot) {
    const Predicate* child = p.children.empty() ? nullptr : &p.children.front();
    return child != nullptr && child->op == Op::kEq && child->operand_type == BSON_TYPE_NULL;
  }
  // Expression-language comparisons have no type bracketing: {$expr: {$lt: ["$x", 5]}} matches
  // a document without x, which a sparse index leaves out.
  return !is_expr(p.op);
}

// Wildcard indexes keep keys for leaf values only (and for empty arrays and documents): no
// comparison with a non-empty document or array.
bool wildcard_supports(const Predicate& p) {
  if (is_comparison(p.op) || p.op == Op::kIn) return !p.nonempty_container;
  return true;
}

bool hashed_supports(const Predicate& p) {
  switch (p.op) {
    case Op::kEq:
    case Op::kExprEq:
    case Op::kExists:
      return true;
    case Op::kIn:
      return !p.in_regex;
    case Op::kNot:
      return !p.children.empty() && p.children.front().op == Op::kExists;
    default:
      return false;
  }
}

bool last_component_numeric(std::string_view path) {
  const size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == path.size()) return false;
  for (size_t i = dot + 1; i < path.size(); ++i) {
    if (path[i] < '0' || path[i] > '9') return false;
  }
  return true;
}

}  // namespace

bool bounds_generating(const Predicate& p) {
  if (p.op == Op::kNot) {
    return !p.children.empty() && can_use_index_on_own_field(p.children.front());
  }
  return can_use_index_on_own_field(p);
}

std::string_view predicate_path(const Predicate& p) {
  return p.op == Op::kNot && !p.children.empty() ? p.children.front().path : p.path;
}

Tri compatible(const Predicate& p, const IndexModel& index, size_t field,
               const CompatibilityContext& ctx) {
  const auto& [path, kind] = index.fields[field];
  // Strings, arrays and documents compare by collation: the index's must be the query's.
  Tri result = Tri::kYes;
  if (p.collatable_operand) result = worst(result, ctx.collation_match);
  if (result == Tri::kNo) return Tri::kNo;
  if (ctx.under_not && cannot_use_index_under_not(p.op)) return Tri::kNo;
  // An expression-language comparison cannot use a path that holds arrays, which listIndexes
  // does not tell; _id never does, nor does a hashed field.
  if (is_expr(p.op) && kind != FieldKind::kHashed && path != "_id")
    result = worst(result, Tri::kMaybe);

  switch (kind) {
    case FieldKind::kOrdered:
    case FieldKind::kWildcard: {
      if (index.type == IndexType::kText) return Tri::kNo;  // only $text: handled apart
      if (index.sparse && !sparse_supports(p, ctx.in_elem_match_value)) return Tri::kNo;
      if (p.op == Op::kGeoWithin || p.op == Op::kGeoIntersects || p.op == Op::kNear) {
        return Tri::kNo;
      }
      if (p.op == Op::kNot) {
        if (index.type != IndexType::kBtree && index.type != IndexType::kWildcard &&
            index.type != IndexType::kHashed && !ctx.in_elem_match_value) {
          return Tri::kNo;
        }
        if (p.children.empty()) return Tri::kNo;
        const Predicate& child = p.children.front();
        // Bounds to MinKey/MaxKey are inexact on a multikey index and cannot be inverted.
        if (child.min_max_bound) result = worst(result, Tri::kMaybe);
        const bool ne_null = child.op == Op::kEq && child.operand_type == BSON_TYPE_NULL;
        // {$ne: null} can use an index only where the path holds no arrays (or inside some
        // $elemMatch forms): unknown here, except for _id.
        if (ne_null) return path == "_id" ? result : worst(result, Tri::kMaybe);
        if (child.op == Op::kIn) {
          // {$nin: [null, []]} is the one negated $in the planner always indexes.
          if (!child.in_regex && child.in_count == 2 && child.null_operand &&
              child.in_empty_array) {
            return result;
          }
          if (child.in_regex) return Tri::kNo;
          if (child.null_operand && path != "_id") result = worst(result, Tri::kMaybe);
        }
        // Comparisons with arrays are not indexed under a negation.
        if (child.array_operand) return Tri::kNo;
        CompatibilityContext inner = ctx;
        inner.under_not = true;
        return worst(result, compatible(child, index, field, inner));
      }
      if (p.op == Op::kElemMatchValue) {
        if (last_component_numeric(ctx.full_path)) return Tri::kNo;
        CompatibilityContext inner = ctx;
        inner.in_elem_match_value = true;
        for (const Predicate& c : p.children) {
          result = worst(result, compatible(c, index, field, inner));
          if (result == Tri::kNo) return result;
        }
      }
      if (index.type == IndexType::kWildcard && !wildcard_supports(p)) return Tri::kNo;
      // A regex cannot use an index with a non-simple collation: its keys are collation keys.
      if (p.op == Op::kRegex && !index.known->collation.empty()) return Tri::kNo;
      return result;
    }
    case FieldKind::kHashed:
      if (index.sparse && !sparse_supports(p, ctx.in_elem_match_value)) return Tri::kNo;
      return hashed_supports(p) ? result : Tri::kNo;
    case FieldKind::k2dsphere:
      if (p.op == Op::kGeoIntersects) return Tri::kYes;
      if (p.op == Op::kGeoWithin) {
        // GeoJSON shapes and $centerSphere have a spherical region; the flat legacy shapes are
        // not modelled.
        return p.legacy_shape ? Tri::kMaybe : Tri::kYes;
      }
      if (p.op == Op::kNear) return p.spherical ? Tri::kYes : Tri::kMaybe;
      return Tri::kNo;
    case FieldKind::k2d:
      if (p.op == Op::kGeoWithin) {
        if (p.legacy_shape) return Tri::kYes;
        return p.center_sphere ? Tri::kMaybe : Tri::kNo;  // no wrap around the world: unknown
      }
      if (p.op == Op::kNear) return p.legacy_shape ? Tri::kYes : Tri::kMaybe;
      return Tri::kNo;
    case FieldKind::kText:
      return p.op == Op::kText ? Tri::kYes : Tri::kNo;
  }
  return Tri::kNo;
}

}  // namespace docguard::rules::planner
