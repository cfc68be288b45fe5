#include "docguard/rules/query_guardrail.h"

#include <bson/bson.h>

#include <algorithm>

#include "docguard/codec/bson_elements.h"

namespace docguard::rules {

namespace {

using codec::BsonView;

using codec::first_key_of;
using codec::is_operator;

// A value every index compares alike whatever its collation, and that a sparse index holds.
bool plain_value(const codec::BsonElements& e) {
  return e.type != BSON_TYPE_UTF8 && e.type != BSON_TYPE_SYMBOL && !e.holds_document() &&
         !e.holds_array() && e.type != BSON_TYPE_NULL && e.type != BSON_TYPE_UNDEFINED;
}

// The leading $match and $sort stages of a pipeline, the part an index can serve.
void leading_stages(const BsonView& pipeline, BsonView* match, BsonView* sort) {
  if (!codec::well_framed(pipeline)) return;
  for (codec::BsonElements stages(pipeline); stages.next();) {
    if (!stages.holds_document() || !codec::well_framed(stages.container())) return;
    codec::BsonElements stage(stages.container());
    if (!stage.next() || !stage.holds_document()) return;
    const std::string_view name = stage.key;
    if (name == "$match" && match->empty()) {
      *match = stage.container();
    } else if (name == "$sort" && sort->empty()) {
      *sort = stage.container();
    } else if (name != "$match" && name != "$sort") {
      return;
    }
  }
}

}  // namespace

bool sort_names_natural(const codec::BsonView& sort) {
  for (codec::BsonElements e(sort); e.next();) {
    if (e.key == "$natural") return true;
  }
  return false;
}

namespace {

// {$all: [{$elemMatch: ...}, ...]}: an $elemMatch per element, not an equality.
bool all_of_elem_match(const codec::BsonElements& e) {
  if (!e.holds_document() || first_key_of(e) != "$all") return false;
  codec::BsonElements all(e.container());
  if (!all.next() || !all.holds_array()) return false;
  for (codec::BsonElements v(all.container()); v.next();) {
    if (v.holds_document() && first_key(v.container()) == "$elemMatch") return true;
  }
  return false;
}

}  // namespace

bool obviously_served(const codec::BsonView& filter, const NamespaceIndexes* indexes) {
  if (filter.empty()) return true;
  bool empty = true;
  for (codec::BsonElements e(filter); e.next();) {
    const std::string_view key = e.key;
    if (key == "$comment") continue;
    empty = false;
    if (is_operator(key) || e.type == BSON_TYPE_REGEX) continue;
    if (e.holds_document()) {
      const std::string_view op = first_key_of(e);
      if (is_operator(op) && op != "$eq" && op != "$in" && op != "$all" && op != "$ref") continue;
      if (all_of_elem_match(e)) continue;
    }
    // An equality on `key`: served by _id, or by an index starting with it.
    if (key == "_id") return true;
    if (indexes == nullptr || indexes->kind != NamespaceKind::kCollection) continue;
    // A collection with a default collation (its _id index's) compares strings by it.
    const bool collated = std::any_of(indexes->indexes.begin(), indexes->indexes.end(),
                                      [](const KnownIndex& i) { return !i.collation.empty(); });
    if (collated && !plain_value(e)) continue;
    const bool operators = e.holds_document() && is_operator(first_key_of(e));
    for (const KnownIndex& index : indexes->indexes) {
      // A hashed field takes a plain value; $in's regexes or $all's $elemMatch it cannot.
      if (index.fast_leading == KnownIndex::FastLeading::kOrdered ||
          (index.fast_leading == KnownIndex::FastLeading::kHashed && !operators)) {
        if (index.keys.front().first == key) return true;
      }
    }
  }
  return empty;
}

QueryParts query_parts(const codec::CommandView& cmd) {
  // describe() read them all in its one walk of the body.
  QueryParts parts;
  parts.filter = cmd.query;
  parts.sort = cmd.sort;
  parts.projection = cmd.projection;
  parts.hint_name = cmd.hint_name;
  parts.hint_keys = cmd.hint;
  parts.collation = cmd.collation;
  parts.tailable = cmd.tailable;
  parts.has_max_time = cmd.has_max_time;
  if (cmd.kind == codec::CommandKind::kAggregate) {
    parts.pipeline = cmd.pipeline;
    if (!parts.pipeline.empty()) leading_stages(parts.pipeline, &parts.filter, &parts.sort);
  }
  return parts;
}

void read_statement_part(const codec::BsonElements& e, QueryParts& parts) {
  if (e.key == "q" || e.key == "filter") {
    parts.filter = e.container();
  } else if (e.key == "hint") {
    if (e.type == BSON_TYPE_UTF8) parts.hint_name = e.utf8();
    parts.hint_keys = e.holds_document() ? e.container() : BsonView{};
  } else if (e.key == "collation") {
    parts.collation = e.container();
  } else if (e.key == "sort" && e.holds_document()) {
    // An update statement's sort (updateOne and bulkWrite's update since 8.0): part of the
    // plan, as a find's is; an index that provides it serves the statement.
    parts.sort = e.container();
  }
}

QueryParts statement_parts(const codec::BsonView& statement) {
  QueryParts parts;
  for (codec::BsonElements e(statement); e.next();) read_statement_part(e, parts);
  return parts;
}

bool exempt_namespace(std::string_view db, std::string_view coll) {
  return db == "admin" || db == "local" || db == "config" || coll.starts_with("system.");
}

}  // namespace docguard::rules
