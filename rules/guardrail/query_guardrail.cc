#include "docguard/rules/query_guardrail.h"

#include <bson/bson.h>

#include <algorithm>

#include "docguard/codec/bson_elements.h"

namespace docguard::rules {

namespace {

using codec::BsonView;
using codec::key_of;

// $or nests through $and; past this depth a filter is judged unserved (none is written so deep).
constexpr int kMaxDepth = 8;

bool is_operator(std::string_view key) { return !key.empty() && key[0] == '$'; }

std::string_view first_key(const bson_iter_t& it) {
  bson_iter_t child;
  if (!BSON_ITER_HOLDS_DOCUMENT(&it) || !bson_iter_recurse(&it, &child) ||
      !bson_iter_next(&child)) {
    return {};
  }
  return key_of(child);
}

// A filter with nothing to match (no keys but $comment). On the message path: the element walk
// that steps over values (bson_elements.h), as the other per-message reads are.
bool empty_filter(const BsonView& filter) {
  if (filter.empty()) return true;
  for (codec::BsonElements e(filter); e.next();) {
    if (e.key != "$comment") return false;
  }
  return true;
}

// The first key of an embedded document, or "".
std::string_view first_key_of(const codec::BsonElements& e) {
  if (!e.holds_document()) return {};
  codec::BsonElements inner(e.container());
  return inner.next() ? inner.key : std::string_view();
}

bool with_bson(const BsonView& view, bson_t* out) {
  return !view.empty() && bson_init_static(out, view.data, view.size);
}

// What a filter needs beyond its plain shape.
struct Specials {
  bool text = false;
  std::string near_field;            // a $near / $nearSphere / $geoNear field
  std::vector<BsonView> or_clauses;  // arrays of $or branches, top level and inside $and
};

void find_specials(const BsonView& filter, Specials& s, int depth) {
  bson_iter_t it;
  if (depth > kMaxDepth || !bson_iter_init_from_data(&it, filter.data, filter.size)) return;
  while (bson_iter_next(&it)) {
    const std::string_view key = key_of(it);
    if (key == "$text") {
      s.text = true;
    } else if (key == "$or" && BSON_ITER_HOLDS_ARRAY(&it)) {
      s.or_clauses.push_back(codec::view_of(it));
    } else if (key == "$and" && BSON_ITER_HOLDS_ARRAY(&it)) {
      bson_iter_t clauses;
      if (!bson_iter_recurse(&it, &clauses)) continue;
      while (bson_iter_next(&clauses)) {
        if (BSON_ITER_HOLDS_DOCUMENT(&clauses)) {
          find_specials(codec::view_of(clauses), s, depth + 1);
        }
      }
    } else if (!is_operator(key) && BSON_ITER_HOLDS_DOCUMENT(&it) && is_operator(first_key(it))) {
      bson_iter_t ops;
      if (!bson_iter_recurse(&it, &ops)) continue;
      while (bson_iter_next(&ops)) {
        const std::string_view op = key_of(ops);
        if (op == "$near" || op == "$nearSphere" || op == "$geoNear") s.near_field = key;
      }
    }
  }
}

bool has_key_of_type(const NamespaceIndexes& indexes, std::string_view field,
                     std::initializer_list<std::string_view> types) {
  for (const KnownIndex& index : indexes.indexes) {
    for (const auto& [name, type] : index.keys) {
      if ((field.empty() || name == field) &&
          std::find(types.begin(), types.end(), type) != types.end()) {
        return true;
      }
    }
  }
  return false;
}

// Whether the filter is served; when not, `suggestion` gets what would serve it.
bool served(const BsonView& filter, const BsonView& sort, const NamespaceIndexes& indexes,
            int depth, IndexKeys* suggestion) {
  Specials specials;
  find_specials(filter, specials, 0);
  if (specials.text) {
    if (has_key_of_type(indexes, "", {"text"})) return true;
    *suggestion = {{"$**", "text"}};
    return false;
  }
  if (!specials.near_field.empty()) {
    if (has_key_of_type(indexes, specials.near_field, {"2d", "2dsphere"})) return true;
    *suggestion = {{specials.near_field, "2dsphere"}};
    return false;
  }
  bson_t filter_bson, sort_bson;
  const bool has_filter = with_bson(filter, &filter_bson);
  const bool has_sort = with_bson(sort, &sort_bson);
  const QueryShape shape =
      query_shape(has_filter ? &filter_bson : nullptr, has_sort ? &sort_bson : nullptr);
  static const IndexKeys kIdIndex = {{"_id", "1"}};
  if (!shape.empty()) {
    if (index_serves(shape, kIdIndex)) return true;
    for (const KnownIndex& index : indexes.indexes) {
      if (index_serves(shape, index.keys)) return true;
    }
  }
  IndexKeys branch_suggestion;
  for (const BsonView& clauses : specials.or_clauses) {
    bool all = depth < kMaxDepth;
    bson_iter_t it;
    if (!bson_iter_init_from_data(&it, clauses.data, clauses.size)) continue;
    while (all && bson_iter_next(&it)) {
      all = BSON_ITER_HOLDS_DOCUMENT(&it) &&
            served(codec::view_of(it), {}, indexes, depth + 1, &branch_suggestion);
    }
    if (all) return true;
  }
  *suggestion = suggest_index(shape);
  if (suggestion->empty()) *suggestion = std::move(branch_suggestion);
  return false;
}

// The leading $match and $sort stages of a pipeline, the part an index can serve.
void leading_stages(const BsonView& pipeline, BsonView* match, BsonView* sort) {
  bson_iter_t stages, stage;
  if (pipeline.empty() || !bson_iter_init_from_data(&stages, pipeline.data, pipeline.size)) return;
  while (bson_iter_next(&stages)) {
    if (!BSON_ITER_HOLDS_DOCUMENT(&stages) || !bson_iter_recurse(&stages, &stage) ||
        !bson_iter_next(&stage) || !BSON_ITER_HOLDS_DOCUMENT(&stage)) {
      return;
    }
    const std::string_view name = key_of(stage);
    if (name == "$match" && match->empty()) {
      *match = codec::view_of(stage);
    } else if (name == "$sort" && sort->empty()) {
      *sort = codec::view_of(stage);
    } else if (name != "$match" && name != "$sort") {
      return;
    }
  }
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
    }
    // An equality on `key`: served by _id, or by an index starting with it.
    if (key == "_id") return true;
    if (indexes == nullptr) continue;
    for (const KnownIndex& index : indexes->indexes) {
      if (index.keys.empty() || index.keys.front().first != key) continue;
      const std::string& type = index.keys.front().second;
      if (index_key_direction(type) != 0 || type == "hashed") return true;
    }
  }
  return empty;
}

QueryParts query_parts(const codec::CommandView& cmd) {
  QueryParts parts;
  if (cmd.body.empty()) return parts;
  const bool find_and_modify = cmd.kind == codec::CommandKind::kFindAndModify;
  for (codec::BsonElements e(cmd.body); e.next();) {
    const std::string_view key = e.key;
    if (key == "maxTimeMS") {
      parts.has_max_time = true;
      continue;
    }
    const BsonView value = e.container();
    if (value.empty()) continue;
    if (key == "filter" || key == "query") {
      parts.filter = value;
    } else if (key == "sort") {
      parts.sort = value;
    } else if (key == "projection" || (find_and_modify && key == "fields")) {
      parts.projection = value;
    } else if (key == "pipeline" && cmd.kind == codec::CommandKind::kAggregate) {
      parts.pipeline = value;
    }
  }
  if (!parts.pipeline.empty()) leading_stages(parts.pipeline, &parts.filter, &parts.sort);
  return parts;
}

bool exempt_namespace(std::string_view db, std::string_view coll) {
  return db == "admin" || db == "local" || db == "config" || coll.starts_with("system.");
}

IndexVerdict judge_query(const codec::BsonView& filter, const codec::BsonView& sort,
                         const NamespaceIndexes* indexes, IndexKeys* suggestion) {
  if (obviously_served(filter, indexes) || empty_filter(filter)) return IndexVerdict::kServed;
  IndexKeys ignored;
  IndexKeys* wanted = suggestion != nullptr ? suggestion : &ignored;
  static const NamespaceIndexes kNone;
  const NamespaceIndexes& known = indexes != nullptr ? *indexes : kNone;
  if (served(filter, sort, known, 0, wanted)) {
    return IndexVerdict::kServed;
  }
  return indexes != nullptr && indexes->complete ? IndexVerdict::kUnserved : IndexVerdict::kUnknown;
}

}  // namespace docguard::rules
