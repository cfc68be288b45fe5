// The guardrail's question about one query: would a server running with notablescan find an
// indexed plan, refuse it (code 291), or is that not known here? In the server's order:
//   1. an empty filter, the admin/local/config databases and system.* collections are exempt;
//      a collection that does not exist has nothing to scan;
//   2. a tailable cursor and a {$natural: ...} hint are collection scans;
//   3. a hint naming an index is an indexed plan (the whole index is scanned if need be);
//   4. $text and $near need their own index, which the server insists on itself: passed;
//   5. otherwise the filter's predicates, then the sort (index_eligibility.cc).
// An aggregation's query is the $match stages the optimizer moves to its front
// (pipeline_pushdown.cc).
#include <algorithm>

#include "docguard/codec/bson_elements.h"
#include "docguard/rules/query_guardrail.h"
#include "index_eligibility.h"
#include "pipeline_pushdown.h"

namespace docguard::rules {

namespace {

using codec::BsonElements;
using codec::BsonView;
using planner::Tri;

bool natural(const BsonView& doc) {
  BsonElements e(doc);
  return e.find("$natural");
}

bool any_clustered(const NamespaceIndexes* indexes) {
  if (indexes == nullptr) return false;
  for (const KnownIndex& index : indexes->indexes) {
    if (index.clustered) return true;
  }
  return false;
}

// An index has at most 32 fields: a suggestion never needs more paths than that.
constexpr size_t kMaxSuggestedFields = 32;

// The index that would serve an unserved conjunction (errInfo.index), in equality-sort-range
// order; an $or's first unserved branch when nothing beside it could be indexed.
void suggest(const planner::Planner& planner, const planner::Predicate& node, const BsonView& sort,
             IndexKeys* suggestion, int depth) {
  if (suggestion == nullptr || depth > 8) return;
  QueryShape shape;
  std::vector<const planner::Predicate*> pending = {&node};
  while (!pending.empty()) {
    const planner::Predicate* p = pending.back();
    pending.pop_back();
    for (const planner::Predicate& c : p->children) {
      if (c.op == planner::Op::kAnd || c.op == planner::Op::kElemMatchObject) {
        pending.push_back(&c);
      } else if (planner::bounds_generating(c) && !planner::predicate_path(c).empty()) {
        const bool equality =
            c.op == planner::Op::kEq || c.op == planner::Op::kIn || c.op == planner::Op::kExprEq;
        // A path once per run ({$all} of thousands of values names one field thousands of
        // times), and no more fields than an index may have.
        auto& paths = equality ? shape.equality : shape.range;
        const std::string_view path = planner::predicate_path(c);
        if ((!paths.empty() && paths.back() == path) ||
            shape.equality.size() + shape.range.size() >= kMaxSuggestedFields) {
          continue;
        }
        paths.emplace_back(path);
      }
    }
  }
  for (BsonElements e(sort); e.next();) {
    int64_t direction = 0;
    if (e.as_int(&direction)) shape.sort.push_back({std::string(e.key), direction < 0 ? -1 : 1});
  }
  std::sort(shape.equality.begin(), shape.equality.end());
  std::sort(shape.range.begin(), shape.range.end());
  *suggestion = suggest_index(shape);
  if (!suggestion->empty()) return;
  for (const planner::Predicate& c : node.children) {
    if (c.op != planner::Op::kOr) continue;
    for (const planner::Predicate& branch : c.children) {
      if (planner.conjunction_served(branch, 1) == Tri::kNo) {
        suggest(planner, branch, {}, suggestion, depth + 1);
        return;
      }
    }
  }
}

}  // namespace

PlanJudgement judge_plan(const QueryParts& parts, const NamespaceIndexes* indexes,
                         IndexKeys* suggestion) {
  PlanJudgement out;
  if (indexes != nullptr && indexes->kind != NamespaceKind::kCollection) {
    // Planned against another collection's indexes, which a view's or a time-series
    // collection's own list does not tell; or dropped, and maybe created again since by a write
    // docguard does not follow: passed, as unknown.
    out.verdict = IndexVerdict::kUnknown;
    return out;
  }
  // The common served cases (an equality on _id or on a plain index's leading field), from the
  // filter's top level alone.
  if (!parts.not_obviously_served && parts.pipeline.empty() && parts.hint_name.empty() &&
      parts.hint_keys.empty() && parts.collation.empty() && !parts.tailable &&
      !natural_order(parts.sort) && obviously_served(parts.filter, indexes)) {
    return out;
  }
  std::vector<BsonView> filters;
  BsonView sort = parts.sort;
  bool later_match = false;
  bool foreign_reads = false;
  if (!parts.pipeline.empty()) {
    const planner::PushedQuery pushed = planner::push_down(parts.pipeline);
    filters = pushed.matches;
    sort = pushed.sort;
    later_match = pushed.later_match;
    foreign_reads = pushed.foreign_reads;
    if (pushed.geo_near_first) {
      // It needs a geo index, which the server insists on itself: passed, not judged.
      out.verdict = IndexVerdict::kUnknown;
      return out;
    }
  } else if (!parts.filter.empty()) {
    filters.push_back(parts.filter);
  }
  const planner::ParsedFilter parsed = planner::parse_filters(filters);
  if (parsed.always_false) return out;  // no document can match: an empty-result plan
  if (parsed.root.children.empty() && !parsed.uncertain) {
    // An empty filter is exempt. One whose predicates say nothing to the planner ({$comment}
    // alone, {$and: [{}]}, an $expr no index can serve) is not empty to the server, which may
    // refuse its scan: passed, and counted as unknown.
    if (parts.pipeline.empty() && parts.filter.size > 5) out.verdict = IndexVerdict::kUnknown;
    return out;
  }
  if (parsed.uncertain) out.verdict = IndexVerdict::kUnknown;

  const planner::Planner planner(indexes, parts.collation);
  auto unserved = [&](ScanReason reason) {
    out.reason = reason;
    const bool complete = indexes != nullptr && indexes->complete;
    out.verdict = complete && !parsed.uncertain && !any_clustered(indexes) ? IndexVerdict::kUnserved
                                                                           : IndexVerdict::kUnknown;
    return out;
  };
  if (parts.tailable) return unserved(ScanReason::kTailable);
  if (parts.hint_name.empty() && !parts.hint_keys.empty() && natural(parts.hint_keys)) {
    return unserved(ScanReason::kNaturalHint);
  }
  // The server turns a $natural sort into a $natural hint.
  if (!sort.empty() && natural(sort)) return unserved(ScanReason::kNaturalSort);
  if (!parts.hint_name.empty() || !parts.hint_keys.empty()) {
    const planner::IndexModel* index = planner.hinted(parts.hint_name, parts.hint_keys);
    // A hint naming no index, or a hidden one, the server refuses itself (BadValue); a hinted
    // wildcard or partial index may be refused too.
    const bool plain = index != nullptr && !index->known->hidden &&
                       index->type != planner::IndexType::kWildcard &&
                       index->known->partial_filter.empty();
    out.verdict = plain ? IndexVerdict::kServed : IndexVerdict::kUnknown;
    return out;
  }
  if (parsed.text) {
    out.verdict = planner.has_field(planner::FieldKind::kText, "") ? IndexVerdict::kServed
                                                                   : IndexVerdict::kUnknown;
    return out;
  }
  Tri served = planner.conjunction_served(parsed.root);
  if (parsed.near) {
    // Without an index for it the server fails the query on its own.
    out.verdict = served == Tri::kYes ? IndexVerdict::kServed : IndexVerdict::kUnknown;
    return out;
  }
  if (served != Tri::kYes && !sort.empty()) {
    served = planner::best(served, planner.sort_served(parsed.root, sort));
  }
  if (served == Tri::kYes) {
    // The collection's own query is served; a join's or union's query of another one is not
    // judged here.
    out.verdict = foreign_reads ? IndexVerdict::kUnknown : IndexVerdict::kServed;
    return out;
  }
  if (served == Tri::kMaybe || later_match) {
    out.verdict = IndexVerdict::kUnknown;
    return out;
  }
  suggest(planner, parsed.root, sort, suggestion, 0);
  return unserved(ScanReason::kNoIndex);
}

IndexVerdict judge_query(const codec::BsonView& filter, const codec::BsonView& sort,
                         const NamespaceIndexes* indexes, IndexKeys* suggestion) {
  QueryParts parts;
  parts.filter = filter;
  parts.sort = sort;
  return judge_plan(parts, indexes, suggestion).verdict;
}

}  // namespace docguard::rules
