// The query guardrail's judgement of one query (a read's filter, or one write statement's) and
// the text of its shape.
//
// Can an index serve the query? (MongoDB's notablescan refuses what none can.)
//   * an empty filter passes (the server allows it under notablescan), and so do the admin,
//     local and config databases and system.* collections (the server skips them too);
//   * _id is always served (every collection has its _id index);
//   * otherwise the filter's shape (query_shape.h: equality, sort, range fields) is served when
//     some index's first key serves it (rules::index_serves, the advisor's rule);
//   * $or (at the top level or inside $and) is served when every branch is;
//   * $text needs a text index, $near / $nearSphere / $geoNear a geo index on the field;
//   * nothing else ($where, $expr, $nor alone, unindexed fields) is served.
// While the namespace's indexes are not known, a query that the known ones do not serve is
// "unknown": never refused.
//
// The shape text names fields and operators, never values, and is what `allow` entries,
// errInfo.shape and the workload ledger use:
//   {status: ?, total: {$gt: ?}, $or: [{a: ?}, {b: ?}]} sort {created: -1} projection {name}
// Keys keep the client's order; text past max_bytes ends with "...".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/command_view.h"
#include "docguard/rules/index_catalog.h"
#include "docguard/rules/query_shape.h"

namespace docguard::rules {

enum class IndexVerdict { kServed, kUnserved, kUnknown };

// What a command asks of an index: its filter, sort and projection (any may be empty).
struct QueryParts {
  codec::BsonView filter;
  codec::BsonView sort;
  codec::BsonView projection;
  // aggregate: the pipeline, whose leading $match / $sort stages are the filter and sort.
  codec::BsonView pipeline;
  bool has_max_time = false;  // the command carries maxTimeMS
};

// The parts of a read command (find, aggregate, count, distinct, findAndModify) from its body.
QueryParts query_parts(const codec::CommandView& cmd);

// Whether the namespace is one the server never refuses a collection scan on.
bool exempt_namespace(std::string_view db, std::string_view coll);

// The key of a filter that is exactly one field equal to a fixed-size scalar ({_id: <ObjectId>},
// {n: 5}), read from its bytes without a walk; empty for any other filter. The commonest filter
// of all: the guardrail passes {_id: ...} on it before it looks for the namespace's indexes, and
// the workload ledger hashes it from it.
std::string_view single_scalar_equality(const codec::BsonView& filter);

// The common served cases, in one walk of the filter's top level without building a shape: an
// empty filter, an equality on _id or on a field some known index starts with (ascending,
// descending or hashed). Sound, not complete: false sends the query the whole way (judge_query).
bool obviously_served(const codec::BsonView& filter, const NamespaceIndexes* indexes);

// Judges a filter and sort against what is known of the namespace's indexes (null: nothing).
// When the verdict is kUnserved, `suggestion` gets the index that would serve (ESR order).
IndexVerdict judge_query(const codec::BsonView& filter, const codec::BsonView& sort,
                         const NamespaceIndexes* indexes, IndexKeys* suggestion);

// Appends the shape text of a query (see the file comment). `pipeline` non-empty: the shape of
// an aggregation, "pipeline [$match {...}, $sort {...}, $group]". At most about max_bytes are
// appended: past them, even inside a key, the text is cut and ends with "...". Returns whether
// it was cut: a cut text names no shape in full (an `allow` entry must not match it).
bool append_shape_text(std::string& out, const QueryParts& parts, size_t max_bytes = 512);

}  // namespace docguard::rules
