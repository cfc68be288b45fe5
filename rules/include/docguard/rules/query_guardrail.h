// The query guardrail's judgement of one query (a read's filter, or one write statement's) and
// the text of its shape.
//
// Would a server running with notablescan find an indexed plan? The guardrail follows the
// server's planner (plan_judgement.cc, docs/guardrail.md): an empty filter and the admin, local
// and config databases and system.* collections are exempt; a tailable cursor and a $natural hint
// are collection scans; a hint naming an index is an indexed plan; otherwise some index must be
// usable for a predicate on its leading field, or give the requested sort, or every branch of an
// $or must be served. What depends on what listIndexes does not tell (multikey paths, the
// collection's default collation) or on rules not modelled is "unknown": never refused. While
// the namespace's indexes are not all known, a query the known ones do not serve is unknown too.
//
// The shape text names fields and operators, never values, and is what `allow` entries,
// errInfo.shape and the workload ledger use:
//   {status: ?, total: {$gt: ?}, $or: [{a: ?}, {b: ?}]} sort {created: -1} projection {name}
// Keys keep the client's order; text past max_bytes ends with "...".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/bson_view.h"
#include "docguard/codec/command_view.h"
#include "docguard/rules/index_catalog.h"
#include "docguard/rules/query_shape.h"

namespace docguard::rules {

enum class IndexVerdict { kServed, kUnserved, kUnknown };

struct PlanJudgement {
  IndexVerdict verdict = IndexVerdict::kServed;
  ScanReason reason = ScanReason::kNoIndex;
};

// What a command asks of an index: its filter, sort and projection (any may be empty), and what
// else decides the plan.
struct QueryParts {
  codec::BsonView filter;
  codec::BsonView sort;
  codec::BsonView projection;
  // aggregate: the pipeline, whose leading $match / $sort stages are the filter and sort.
  codec::BsonView pipeline;
  std::string_view hint_name;  // hint: "name_1"
  codec::BsonView hint_keys;   // hint: {name: 1} or {$natural: 1}
  codec::BsonView collation;
  bool tailable = false;
  bool has_max_time = false;  // the command carries maxTimeMS
  // The caller already asked obviously_served of this filter with these indexes, and the answer
  // was no: judge_plan does not ask again.
  bool not_obviously_served = false;
};

// The parts of a read command (find, aggregate, count, distinct, findAndModify) from its body.
QueryParts query_parts(const codec::CommandView& cmd);

// The parts of one update or delete statement ({q, hint, collation, sort}), or of one bulkWrite
// operation ({filter, hint, collation, sort}).
QueryParts statement_parts(const codec::BsonView& statement);
// One field of such a statement into `parts`, for a caller that walks the statement itself.
void read_statement_part(const codec::BsonElements& field, QueryParts& parts);

// Whether the namespace is one the server never refuses a collection scan on.
bool exempt_namespace(std::string_view db, std::string_view coll);

// The common served cases, in one walk of the filter's top level without building a shape: an
// empty filter, an equality on _id or on a field some plain known index starts with (ascending,
// descending or hashed; not sparse, partial or hidden; with a collation only for a value no
// collation compares). Sound, not complete: false sends the query the whole way (judge_plan).
bool obviously_served(const codec::BsonView& filter, const NamespaceIndexes* indexes);
// Whether a sort asks for the natural order ({$natural: 1}): a collection scan. Inline for the
// common case, no sort, on every read's fast path.
bool sort_names_natural(const codec::BsonView& sort);
inline bool natural_order(const codec::BsonView& sort) {
  return !sort.empty() && sort_names_natural(sort);
}

// Judges a query against what is known of the namespace's indexes (null: nothing). When the
// verdict is kUnserved, `suggestion` (may be null) gets the index that would serve (ESR order).
PlanJudgement judge_plan(const QueryParts& parts, const NamespaceIndexes* indexes,
                         IndexKeys* suggestion);

// The same for a filter and a sort alone.
IndexVerdict judge_query(const codec::BsonView& filter, const codec::BsonView& sort,
                         const NamespaceIndexes* indexes, IndexKeys* suggestion);

// Appends the shape text of a query (see the file comment). `pipeline` non-empty: the shape of
// an aggregation, "pipeline [$match {...}, $sort {...}, $group]". At most about max_bytes are
// appended: past them, even inside a key, the text is cut and ends with "...". Returns whether
// it was cut: a cut text names no shape in full (an `allow` entry must not match it).
bool append_shape_text(std::string& out, const QueryParts& parts, size_t max_bytes = 512);

}  // namespace docguard::rules
