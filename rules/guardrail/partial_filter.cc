// The two facts of an index that are documents: its collation and its partial filter. A string
// predicate uses an index only under the same collation as the query's; a partial index serves a
// query only when every document the query matches is in the index (the server proves it with
// isSubsetOf: each of the filter's conditions follows from a condition of the query on the same
// path). What cannot be proven here is kMaybe, not kNo: the server may prove more.
#include <cstring>
#include <string>
#include <vector>

#include "docguard/codec/bson_elements.h"
#include "planner_model.h"

namespace docguard::rules::planner {

namespace {

using codec::BsonElements;
using codec::BsonView;

bool simple(const BsonView& collation) {
  return collation.empty() || codec::find_string(collation, "locale") == "simple";
}

// Every field the query's collation states has the same value in the index's (the index's
// collation is stored whole, with the locale's defaults filled in).
Tri same_collation(const BsonView& query, const BsonView& index) {
  if (simple(query) || simple(index)) return simple(query) && simple(index) ? Tri::kYes : Tri::kNo;
  if (codec::find_string(query, "locale") != codec::find_string(index, "locale")) return Tri::kNo;
  for (BsonElements q(query); q.next();) {
    BsonElements i(index);
    if (!i.find(q.key)) return Tri::kMaybe;  // a default the index's spec does not show
    if (i.type != q.type || i.value_size != q.value_size ||
        std::memcmp(i.value, q.value, q.value_size) != 0) {
      return q.key == "locale" ? Tri::kNo : Tri::kMaybe;
    }
  }
  return Tri::kYes;
}

// A number, for comparisons between conditions on numbers.
bool number_of(uint8_t type, const uint8_t* value, double* out) {
  BsonElements e(nullptr, 0);
  e.type = type;
  e.value = value;
  switch (type) {
    case BSON_TYPE_INT32:
    case BSON_TYPE_INT64: {
      *out = static_cast<double>(e.as_int64());
      return true;
    }
    case BSON_TYPE_DOUBLE:
      std::memcpy(out, value, 8);
      return *out == *out;  // not NaN
    default:
      return false;
  }
}

// Whether every number an equality or $in `q` allows is among the numbers of the $in `f`.
bool within_numeric_in(const Predicate& q, const Predicate& f) {
  auto listed = [&](double v) {
    double x = 0;
    for (BsonElements e(f.operand, f.operand_size); e.next();) {
      if (number_of(e.type, e.value, &x) && x == v) return true;
    }
    return false;
  };
  double v = 0;
  if (q.op == Op::kEq) return number_of(q.operand_type, q.operand, &v) && listed(v);
  if (q.op != Op::kIn || q.in_count == 0) return false;
  for (BsonElements e(q.operand, q.operand_size); e.next();) {
    if (!number_of(e.type, e.value, &v) || !listed(v)) return false;
  }
  return true;
}

// Whether `q` (one condition of the query) implies `f` (one of the filter's), both on one path.
bool implies(const Predicate& q, const Predicate& f) {
  if (q.op == Op::kNot) {
    // {$ne: null} and {$nin: [null, ...]}: neither missing nor null, so the field exists.
    if (f.op != Op::kExists || q.children.size() != 1) return false;
    const Predicate& inner = q.children.front();
    return (inner.op == Op::kEq || inner.op == Op::kIn) && inner.null_operand;
  }
  if (f.op == Op::kIn) return within_numeric_in(q, f);
  if (f.op == Op::kExists) {
    // Any condition a missing or null value cannot meet.
    switch (q.op) {
      case Op::kExists:
      case Op::kType:
      case Op::kRegex:
      case Op::kMod:
        return true;
      case Op::kEq:
      case Op::kLt:
      case Op::kLte:
      case Op::kGt:
      case Op::kGte:
      case Op::kIn:
        return !q.null_operand && q.operand_type != BSON_TYPE_MINKEY &&
               q.operand_type != BSON_TYPE_MAXKEY;
      default:
        return false;
    }
  }
  if (q.op == Op::kEq && f.op == Op::kEq) {
    double a = 0, b = 0;
    if (number_of(q.operand_type, q.operand, &a) && number_of(f.operand_type, f.operand, &b)) {
      return a == b;
    }
    return q.operand_type == f.operand_type && q.operand_size == f.operand_size &&
           std::memcmp(q.operand, f.operand, q.operand_size) == 0 && !q.collatable_operand;
  }
  const bool f_lower = f.op == Op::kGt || f.op == Op::kGte;
  const bool f_upper = f.op == Op::kLt || f.op == Op::kLte;
  double bound = 0;
  if (!(f_lower || f_upper) || !number_of(f.operand_type, f.operand, &bound)) return false;
  // Whether the values a condition with boundary x allows all meet f: an exact value x, or a
  // strict bound (> x, < x), or an inclusive one (>= x, <= x).
  auto meets = [&](double x, bool strict) {
    switch (f.op) {
      case Op::kGt:
        return strict ? x >= bound : x > bound;
      case Op::kGte:
        return x >= bound;
      case Op::kLt:
        return strict ? x <= bound : x < bound;
      default:
        return x <= bound;
    }
  };
  double v = 0;
  if (q.op == Op::kEq) return number_of(q.operand_type, q.operand, &v) && meets(v, false);
  if (q.op == Op::kIn) {
    bool all = q.in_count > 0;
    for (BsonElements e(q.operand, q.operand_size); all && e.next();) {
      all = number_of(e.type, e.value, &v) && meets(v, false);
    }
    return all;
  }
  const bool q_lower = q.op == Op::kGt || q.op == Op::kGte;
  const bool q_upper = q.op == Op::kLt || q.op == Op::kLte;
  if ((f_lower && !q_lower) || (f_upper && !q_upper)) return false;
  // {$gt: 10} implies {$gt: 5} and {$gte: 10}; {$gte: 10} implies {$gt: 9.5} but not {$gt: 10}.
  return number_of(q.operand_type, q.operand, &v) && meets(v, q.op == Op::kGt || q.op == Op::kLt);
}

bool numeric(const Predicate& p) {
  double ignored = 0;
  if (p.op == Op::kIn) {
    for (BsonElements e(p.operand, p.operand_size); e.next();) {
      if (!number_of(e.type, e.value, &ignored)) return false;
    }
    return true;
  }
  return (p.op == Op::kEq || p.op == Op::kLt || p.op == Op::kLte || p.op == Op::kGt ||
          p.op == Op::kGte) &&
         number_of(p.operand_type, p.operand, &ignored);
}

// Whether the server, too, can only find that `q` does not imply `f`.
bool decidably_not(const Predicate& q, const Predicate& f) {
  if (q.op == Op::kNot || q.op == Op::kExprEq || q.op == Op::kExprCmp) return true;
  if (f.op == Op::kExists) return q.null_operand && (q.op == Op::kEq || q.op == Op::kIn);
  return numeric(q) && numeric(f);
}

void conditions(const Predicate& node, std::vector<const Predicate*>& out) {
  for (const Predicate& c : node.children) {
    if (c.op == Op::kAnd) {
      conditions(c, out);
    } else {
      out.push_back(&c);
    }
  }
}

Tri implies_condition(const Predicate& query_and, const Predicate& f) {
  std::vector<const Predicate*> have;
  conditions(query_and, have);
  bool undecided = false;
  for (const Predicate* q : have) {
    if (q->op == Op::kOr) {
      // An $or implies what each of its branches implies.
      Tri all = q->children.empty() ? Tri::kNo : Tri::kYes;
      for (const Predicate& branch : q->children) all = worst(all, implies_condition(branch, f));
      if (all == Tri::kYes) return Tri::kYes;
      undecided |= all == Tri::kMaybe;
      continue;
    }
    const bool negation =
        q->op == Op::kNot && !q->children.empty() && q->children.front().path == f.path;
    if (q->path != f.path && !negation) continue;
    if (implies(*q, f)) return Tri::kYes;
    undecided |= !decidably_not(*q, f);
  }
  return undecided ? Tri::kMaybe : Tri::kNo;
}

}  // namespace

Tri collations_match(const BsonView& query, const BsonView& index,
                     const std::string* collection_default) {
  if (!query.empty()) return same_collation(query, index);
  if (collection_default != nullptr)
    return same_collation(view_of_bytes(*collection_default), index);
  return Tri::kMaybe;  // the collection's default collation is not known
}

Tri implies_partial_filter(const Predicate& query_and, const BsonView& partial_filter) {
  const ParsedFilter filter = parse_filter(partial_filter, 256);
  if (filter.uncertain) return Tri::kMaybe;
  std::vector<const Predicate*> wanted;
  conditions(filter.root, wanted);
  Tri result = Tri::kYes;
  for (const Predicate* f : wanted) {
    if (f->path.empty()) return Tri::kMaybe;  // $or in a filter: not modelled
    result = worst(result, implies_condition(query_and, *f));
    if (result == Tri::kNo) break;
  }
  return result;
}

}  // namespace docguard::rules::planner
