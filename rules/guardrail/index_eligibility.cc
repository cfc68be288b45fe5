// Whether the server's planner finds an indexed plan for a query: the rules docs/guardrail.md
// states. An index is usable when one of the filter's bounds-generating predicates is on its
// leading field and compatible with it (index_compatibility.cc); a conjunction is served by any
// usable index or by an $or all of whose branches are; a sort is served by a plain index whose
// key pattern (or its reverse) it is a prefix of; a hint names the plan outright.
#include "index_eligibility.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "docguard/codec/bson_elements.h"

namespace docguard::rules::planner {

namespace {

using codec::BsonElements;
using codec::BsonView;

FieldKind kind_of(const std::string& name, const std::string& type) {
  if (name == "$**" || name.ends_with(".$**")) return FieldKind::kWildcard;
  if (type == "hashed") return FieldKind::kHashed;
  if (type == "2d") return FieldKind::k2d;
  if (type == "2dsphere") return FieldKind::k2dsphere;
  if (type == "text") return FieldKind::kText;
  return FieldKind::kOrdered;
}

// The and-related predicates of a conjunction: bounds-generating ones, through nested
// conjunctions and $elemMatch on documents; the $or nodes apart, each with whether it sits
// inside an $elemMatch (where a partial index's filter cannot be proven branch by branch).
void partition(const Predicate& node, std::vector<const Predicate*>& related,
               std::vector<std::pair<const Predicate*, bool>>& ors, bool in_elem_match) {
  for (const Predicate& child : node.children) {
    if (bounds_generating(child)) {
      related.push_back(&child);
    } else if (child.op == Op::kElemMatchObject || child.op == Op::kAnd) {
      partition(child, related, ors, in_elem_match || child.op == Op::kElemMatchObject);
    } else if (child.op == Op::kOr) {
      ors.emplace_back(&child, in_elem_match);
    }
  }
}

// Whether a wildcard key field ("$**", "a.$**") with the index's projection covers `path`.
Tri wildcard_covers(const IndexModel& index, const std::string& key, std::string_view path) {
  if (key != "$**") {
    const std::string_view base(key.data(), key.size() - 4);
    return path == base || (path.starts_with(base) && path[base.size()] == '.') ? Tri::kYes
                                                                                : Tri::kNo;
  }
  const BsonView projection = view_of_bytes(index.known->wildcard_projection);
  if (projection.empty()) {
    return path == "_id" || path.starts_with("_id.") ? Tri::kNo : Tri::kYes;
  }
  bool inclusion = false, exclusion = false, listed = false;
  for (BsonElements e(projection); e.next();) {
    const bool keep = e.as_bool();
    const bool under = path == e.key || (path.starts_with(e.key) && path[e.key.size()] == '.');
    if (e.key == "_id") {
      if (under) return keep ? Tri::kYes : Tri::kNo;
      continue;
    }
    (keep ? inclusion : exclusion) = true;
    listed |= under;
  }
  if (path == "_id" || path.starts_with("_id.")) return Tri::kNo;
  if (inclusion && !exclusion) return listed ? Tri::kYes : Tri::kNo;
  if (exclusion && !inclusion) return listed ? Tri::kNo : Tri::kYes;
  return Tri::kMaybe;
}

}  // namespace

IndexModel model_of(const KnownIndex& index) {
  IndexModel m;
  m.known = &index;
  m.sparse = index.sparse;
  for (const auto& [name, type] : index.keys) {
    const FieldKind kind = kind_of(name, type);
    m.fields.emplace_back(name, kind);
    if (m.type != IndexType::kBtree) continue;  // the first special field names the type
    switch (kind) {
      case FieldKind::kWildcard:
        m.type = IndexType::kWildcard;
        m.sparse = true;  // a wildcard index keeps no key for a missing field
        break;
      case FieldKind::kHashed:
        m.type = IndexType::kHashed;
        break;
      case FieldKind::k2d:
        m.type = IndexType::k2d;
        break;
      case FieldKind::k2dsphere:
        m.type = IndexType::k2dsphere;
        break;
      case FieldKind::kText:
        m.type = IndexType::kText;
        break;
      case FieldKind::kOrdered:
        break;
    }
  }
  return m;
}

Planner::Planner(const NamespaceIndexes* indexes, const BsonView& query_collation)
    : query_collation_(query_collation) {
  bool has_id = false;
  if (indexes != nullptr) {
    indexes_.reserve(indexes->indexes.size() + 1);
    for (const KnownIndex& index : indexes->indexes) {
      if (index.keys.size() == 1 && index.keys.front().first == "_id" &&
          index_key_direction(index.keys.front().second) != 0) {
        has_id = true;
        // The collection's default collation is its _id index's.
        if (indexes->complete) collection_default_ = &index.collation;
      }
      indexes_.push_back(model_of(index));
    }
  }
  if (!has_id) {
    implicit_id_ = KnownIndex{"_id_", {{"_id", "1"}}};
    indexes_.push_back(model_of(implicit_id_));
    // A collection's default collation is every index's that was created without one: a
    // complete list where no index has one is a collection without a default.
    const bool any_collation =
        indexes != nullptr && std::any_of(indexes->indexes.begin(), indexes->indexes.end(),
                                          [](const KnownIndex& i) { return !i.collation.empty(); });
    if (indexes != nullptr && indexes->complete && !any_collation) {
      collection_default_ = &implicit_id_.collation;
    }
  }
}

Tri Planner::collation_with(const IndexModel& index) const {
  const BsonView own = view_of_bytes(index.known->collation);
  // The implicit _id index has the collection's default collation, as a query without one.
  if (index.known == &implicit_id_) return query_collation_.empty() ? Tri::kYes : Tri::kMaybe;
  return collations_match(query_collation_, own, collection_default_);
}

const IndexModel* Planner::hinted(std::string_view name, const BsonView& keys) const {
  for (const IndexModel& index : indexes_) {
    if (!name.empty()) {
      if (index.known->name == name) return &index;
      continue;
    }
    const IndexKeys wanted = index_keys_of(keys);
    if (!wanted.empty() && wanted.size() == index.known->keys.size()) {
      bool same = true;
      for (size_t i = 0; i < wanted.size() && same; ++i) {
        const auto& [field, type] = index.known->keys[i];
        same = field == wanted[i].first &&
               (type == wanted[i].second ||
                index_key_direction(type) * index_key_direction(wanted[i].second) == 1);
      }
      if (same) return &index;
    }
  }
  return nullptr;
}

bool Planner::has_field(FieldKind kind, std::string_view path) const {
  for (const IndexModel& index : indexes_) {
    if (index.known->hidden) continue;
    for (const auto& [name, field_kind] : index.fields) {
      if (field_kind == kind && (path.empty() || name == path)) return true;
    }
  }
  return false;
}

Tri Planner::index_serves_and(size_t at, const Predicate& node,
                              const std::vector<const Predicate*>& related,
                              bool partial_from_root) const {
  const IndexModel& index = indexes_[at];
  if (index.fields.empty() || index.known->hidden || index.type == IndexType::kText) {
    return Tri::kNo;
  }
  const auto& [leading, leading_kind] = index.fields.front();
  // A 2dsphere index (version 2 and later) has no key for a document without its geo field: it
  // is used only beside a geo predicate on one of its 2dsphere fields.
  if (index.type == IndexType::k2dsphere && index.known->s2_version != 1) {
    const bool geo = std::any_of(related.begin(), related.end(), [&](const Predicate* p) {
      if (p->op != Op::kGeoWithin && p->op != Op::kGeoIntersects && p->op != Op::kNear) {
        return false;
      }
      return std::any_of(index.fields.begin(), index.fields.end(), [&](const auto& f) {
        return f.second == FieldKind::k2dsphere && f.first == p->path;
      });
    });
    if (!geo) return Tri::kNo;
  }
  Tri served = Tri::kNo;
  for (const Predicate* p : related) {
    const std::string_view path = predicate_path(*p);
    Tri covers = path == leading ? Tri::kYes : Tri::kNo;
    if (leading_kind == FieldKind::kWildcard) covers = wildcard_covers(index, leading, path);
    if (covers == Tri::kNo) continue;
    CompatibilityContext ctx;
    ctx.collation_match = collation_with(index);
    ctx.full_path = path;
    served = best(served, worst(covers, compatible(*p, index, 0, ctx)));
    if (served == Tri::kYes) break;
  }
  if (served == Tri::kNo || index.known->partial_filter.empty()) return served;
  // The whole query implies the filter, or this $or branch does.
  const BsonView filter = view_of_bytes(index.known->partial_filter);
  Tri implied = Tri::kNo;
  if (root_ != nullptr) {
    if (root_implies_.empty()) root_implies_.assign(indexes_.size(), std::nullopt);
    if (!root_implies_[at]) root_implies_[at] = implies_partial_filter(*root_, filter);
    implied = *root_implies_[at];
  }
  if (implied != Tri::kYes && !partial_from_root && &node != root_) {
    implied = best(implied, implies_partial_filter(node, filter));
  }
  return worst(served, implied);
}

Tri Planner::conjunction_served(const Predicate& node, int depth, bool partial_from_root) const {
  if (depth == 0) {
    root_ = &node;
    root_implies_.clear();  // filled when a partial index is first met
  }
  std::vector<const Predicate*> related;
  std::vector<std::pair<const Predicate*, bool>> ors;
  partition(node, related, ors, false);
  Tri served = Tri::kNo;
  for (size_t at = 0; at < indexes_.size(); ++at) {
    served = best(served, index_serves_and(at, node, related, partial_from_root));
    if (served == Tri::kYes) return served;
  }
  for (const auto& [p, in_elem_match] : ors) {
    if (p->children.empty()) continue;
    if (depth > 16) return best(served, Tri::kMaybe);
    // An $or is indexed when each of its branches is.
    Tri all = Tri::kYes;
    for (const Predicate& branch : p->children) {
      all = worst(all, conjunction_served(branch, depth + 1, partial_from_root || in_elem_match));
      if (all == Tri::kNo) break;
    }
    served = best(served, all);
    if (served == Tri::kYes) return served;
  }
  return served;
}

Tri Planner::sort_served(const Predicate& root, const BsonView& sort) const {
  std::vector<std::pair<std::string_view, int>> wanted;
  for (BsonElements e(sort); e.next();) {
    int64_t direction = 0;
    if (!e.as_int(&direction) || (direction != 1 && direction != -1)) return Tri::kNo;
    wanted.emplace_back(e.key, static_cast<int>(direction));
  }
  if (wanted.empty()) return Tri::kNo;
  Tri served = Tri::kNo;
  for (const IndexModel& index : indexes_) {
    // Only a plain index, or the ordered prefix of a compound hashed one, gives an order; a
    // sparse one would leave documents out.
    if (index.known->hidden || index.sparse ||
        (index.type != IndexType::kBtree && index.type != IndexType::kHashed)) {
      continue;
    }
    size_t ordered = 0;
    while (ordered < index.fields.size() && index.fields[ordered].second == FieldKind::kOrdered) {
      ++ordered;
    }
    if (wanted.size() > ordered) continue;
    bool forward = true, backward = true;
    for (size_t i = 0; i < wanted.size(); ++i) {
      const auto& [field, type] = index.known->keys[i];
      const int direction = index_key_direction(type) < 0 ? -1 : 1;
      forward &= field == wanted[i].first && direction == wanted[i].second;
      backward &= field == wanted[i].first && direction == -wanted[i].second;
    }
    if (!forward && !backward) continue;
    // Strings would be ordered by another collation; a partial index must hold every match.
    Tri usable = collation_with(index);
    if (!index.known->partial_filter.empty()) {
      usable =
          worst(usable, implies_partial_filter(root, view_of_bytes(index.known->partial_filter)));
    }
    served = best(served, usable);
  }
  return served;
}

}  // namespace docguard::rules::planner
