#include "docguard/rules/query_shape.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <string_view>

#include "docguard/base/bounded_text.h"
#include "docguard/codec/bson_elements.h"
#include "docguard/codec/bson_view.h"

namespace docguard::rules {
namespace {

using codec::BsonElements;
using codec::BsonView;
using codec::well_framed;

// Filters nest through $and and $elemMatch; past this depth the rest is not walked (a filter
// that deep is not one an index advice could be written for anyway).
constexpr int kMaxDepth = 16;

// What one shape may hold, whatever the client sends (a BSON key has no length limit short of
// the message's): a field path or an operator name of megabytes must not be copied into the
// shape, which the workload ledger keeps and the guardrail's suggestion and errInfo repeat.
constexpr size_t kMaxPathBytes = 512;    // a field path judged; a longer one is left out
constexpr size_t kMaxSkippedBytes = 64;  // a skipped operator's name as kept (cut, marked)
constexpr size_t kMaxShapeBytes = 4096;  // all paths and names of one shape together
constexpr std::string_view kTooLarge = "(too large)";

struct ShapeBuilder {
  std::set<std::string> equality, range, skipped;
  std::vector<SortKey> sort;
  size_t bytes = 0;

  // A field path into `fields`, unless it or the shape is too large: then the shape says
  // so in `skipped` (a path left out cannot be judged, nor suggested for an index).
  bool fits(size_t size) {
    if (size <= kMaxPathBytes && bytes + size <= kMaxShapeBytes) {
      bytes += size;
      return true;
    }
    skipped.emplace(kTooLarge);
    return false;
  }
  void add(std::set<std::string>& fields, std::string path) {
    if (fits(path.size())) fields.insert(std::move(path));
  }
  // An operator left out of the judgement, by its name cut to kMaxSkippedBytes.
  void skip(std::string_view name) {
    std::string kept = base::bounded(name, kMaxSkippedBytes);
    const size_t size = kept.size();
    if (bytes + size > kMaxShapeBytes) {
      skipped.emplace(kTooLarge);
      return;
    }
    if (skipped.insert(std::move(kept)).second) bytes += size;
  }
};

using codec::first_key_of;
using codec::is_operator;

bool is_logical(std::string_view key) { return key == "$and" || key == "$or" || key == "$nor"; }

bool is_range_operator(std::string_view op) {
  static constexpr std::string_view kRange[] = {
      "$gt",  "$gte",        "$lt",         "$lte",          "$ne",
      "$nin", "$exists",     "$not",        "$regex",        "$type",
      "$mod", "$bitsAllSet", "$bitsAnySet", "$bitsAllClear", "$bitsAnyClear"};
  return std::find(std::begin(kRange), std::end(kRange), op) != std::end(kRange);
}

void add_filter(const BsonView& doc, const std::string& prefix, ShapeBuilder& b, int depth);

// The operators of one field: {$gt: 1, $lt: 5}, {$in: [...]}, {$elemMatch: {...}}.
void add_operators(const BsonView& ops, const std::string& path, ShapeBuilder& b, int depth) {
  for (BsonElements it(ops); it.next();) {
    const std::string_view op = it.key;
    if (op == "$eq" || op == "$in" || op == "$all") {
      b.add(b.equality, path);
    } else if (is_range_operator(op)) {
      b.add(b.range, path);
    } else if (op == "$options") {
      // belongs to $regex, already counted
    } else if (op == "$elemMatch") {
      if (depth >= kMaxDepth || !it.holds_document() || !well_framed(it.container())) continue;
      const std::string_view first = first_key_of(it);
      // {$elemMatch: {$gt: 1}} matches values; {$elemMatch: {sku: 1}} matches fields of
      // documents, which an index reaches as path.sku.
      if (is_operator(first) && !is_logical(first)) {
        add_operators(it.container(), path, b, depth + 1);
      } else {
        add_filter(it.container(), path + ".", b, depth + 1);
      }
    } else {
      b.skip(op);  // geo operators, $size, unknown ones
    }
  }
}

void add_filter(const BsonView& doc, const std::string& prefix, ShapeBuilder& b, int depth) {
  for (BsonElements it(doc); it.next();) {
    const std::string_view key = it.key;
    if (is_operator(key)) {
      if (key == "$and") {
        if (depth >= kMaxDepth || !codec::is_container(it.type) || !well_framed(it.container())) {
          continue;
        }
        for (BsonElements clause(it.container()); clause.next();) {
          if (clause.holds_document() && well_framed(clause.container())) {
            add_filter(clause.container(), prefix, b, depth + 1);
          }
        }
      } else if (key != "$comment") {
        b.skip(key);  // $or, $nor, $text, $where, $expr, $jsonSchema
      }
      continue;
    }
    if (prefix.size() + key.size() > kMaxPathBytes) {
      b.fits(prefix.size() + key.size());  // never copied: says the shape is too large
      continue;
    }
    std::string path = prefix;
    path.append(key);
    if (it.holds_regex()) {
      b.add(b.range, std::move(path));
    } else if (const std::string_view first = first_key_of(it);
               is_operator(first) && first != "$ref") {
      if (well_framed(it.container())) add_operators(it.container(), path, b, depth + 1);
    } else {
      // A value, or a whole embedded document (a DBRef {$ref, $id} is one too).
      b.add(b.equality, std::move(path));
    }
  }
}

void add_sort(const BsonView& sort, ShapeBuilder& b) {
  if (!well_framed(sort)) return;
  std::vector<SortKey> keys;
  for (BsonElements it(sort); it.next();) {
    const double value = it.holds_number() ? it.as_double() : 0;
    if (value != 1 && value != -1) {
      // {score: {$meta: "textScore"}} or a malformed sort: no index order can give it.
      b.skip(first_key_of(it) == "$meta" ? "$meta" : "sort");
      return;
    }
    if (!b.fits(it.key.size())) return;
    keys.push_back(SortKey{std::string(it.key), value > 0 ? 1 : -1});
  }
  b.sort = std::move(keys);
}

QueryShape finish(ShapeBuilder& b) {
  QueryShape shape;
  shape.equality.assign(b.equality.begin(), b.equality.end());
  for (const std::string& field : b.range) {
    if (!b.equality.count(field)) shape.range.push_back(field);
  }
  for (SortKey& key : b.sort) {
    if (!b.equality.count(key.field)) shape.sort.push_back(std::move(key));
  }
  shape.skipped.assign(b.skipped.begin(), b.skipped.end());
  return shape;
}

bool is_direction(const std::string& type) { return index_key_direction(type) != 0; }

// Whether an index whose first key is `key` can look up `field`. `sort_only`: the field is only
// sorted on, which a wildcard or hashed index cannot do.
bool first_key_serves(const std::pair<std::string, std::string>& key, const std::string& field,
                      bool equality, bool sort_only) {
  const auto& [name, type] = key;
  if (name == "$**") return !sort_only;
  if (name.size() > 4 && name.ends_with(".$**")) {
    const std::string_view base(name.data(), name.size() - 4);
    return !sort_only && field.starts_with(base) &&
           (field.size() == base.size() || field[base.size()] == '.');
  }
  if (name != field) return false;
  if (is_direction(type)) return true;
  return type == "hashed" && equality;  // text and geo indexes serve their own operators only
}

bool is_identifier(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9');
  });
}

}  // namespace

int index_key_direction(std::string_view type) {
  // The server reads a numeric key pattern value by its sign (any number above 0 ascends, below
  // 0 descends); the text is how index_key_text wrote it ("1", "-1", "1.5", "3.2e+219", "NaN").
  double value = 0;
  const auto parsed = std::from_chars(type.data(), type.data() + type.size(), value);
  if (parsed.ec != std::errc() || parsed.ptr != type.data() + type.size()) return 0;
  if (!std::isfinite(value) || value == 0) return 0;
  return value > 0 ? 1 : -1;
}

std::string QueryShape::first_field() const {
  if (!equality.empty()) return equality.front();
  if (!sort.empty()) return sort.front().field;
  if (!range.empty()) return range.front();
  return {};
}

std::string QueryShape::key() const {
  std::string out;
  auto section = [&out](const char* name) {
    out += out.empty() ? "" : "; ";
    out += name;
  };
  if (!equality.empty()) {
    section("eq: ");
    for (size_t i = 0; i < equality.size(); ++i) out += (i ? ", " : "") + equality[i];
  }
  if (!sort.empty()) {
    section("sort: ");
    for (size_t i = 0; i < sort.size(); ++i) {
      out += (i ? ", " : "") + sort[i].field + (sort[i].direction < 0 ? ":-1" : ":1");
    }
  }
  if (!range.empty()) {
    section("range: ");
    for (size_t i = 0; i < range.size(); ++i) out += (i ? ", " : "") + range[i];
  }
  return out;
}

QueryShape query_shape(const bson_t* filter, const bson_t* sort) {
  ShapeBuilder b;
  if (filter != nullptr) add_filter(codec::BsonView{bson_get_data(filter), filter->len}, "", b, 0);
  if (sort != nullptr) add_sort(codec::BsonView{bson_get_data(sort), sort->len}, b);
  return finish(b);
}

QueryShape pipeline_query_shape(const bson_t* pipeline) {
  ShapeBuilder b;
  if (pipeline == nullptr) return finish(b);
  bool sorted = false;
  for (BsonElements stages(pipeline); stages.next();) {
    if (!stages.holds_document() || !well_framed(stages.container())) break;
    BsonElements stage(stages.container());
    if (!stage.next() || !stage.holds_document() || !well_framed(stage.container())) break;
    const std::string_view name = stage.key;
    if (name == "$match") {
      add_filter(stage.container(), "", b, 0);
    } else if (name == "$sort" && !sorted) {
      // The server moves a $match ahead of a $sort, so $sort then $match is the same shape.
      add_sort(stage.container(), b);
      sorted = true;
    } else {
      break;
    }
  }
  return finish(b);
}

bool index_serves(const QueryShape& shape, const IndexKeys& keys) {
  if (keys.empty()) return false;
  const auto& first = keys.front();
  // Any predicate on the index's leading field, equality or range (a hashed field: equality).
  if (std::any_of(shape.equality.begin(), shape.equality.end(),
                  [&](const std::string& f) { return first_key_serves(first, f, true, false); })) {
    return true;
  }
  if (std::any_of(shape.range.begin(), shape.range.end(),
                  [&](const std::string& f) { return first_key_serves(first, f, false, false); })) {
    return true;
  }
  // A sort the index gives: a prefix of its ordered fields, or of their reverse.
  if (shape.sort.empty() || shape.sort.size() > keys.size()) return false;
  bool forward = true, backward = true;
  for (size_t i = 0; i < shape.sort.size(); ++i) {
    const int direction = index_key_direction(keys[i].second);
    forward &= direction != 0 && keys[i].first == shape.sort[i].field &&
               direction == shape.sort[i].direction;
    backward &= direction != 0 && keys[i].first == shape.sort[i].field &&
                direction == -shape.sort[i].direction;
  }
  return forward || backward;
}

std::vector<std::pair<std::string, std::string>> suggest_index(const QueryShape& shape) {
  std::vector<std::pair<std::string, std::string>> keys;
  auto has = [&keys](const std::string& field) {
    return std::any_of(keys.begin(), keys.end(), [&](const auto& k) { return k.first == field; });
  };
  for (const std::string& field : shape.equality) keys.emplace_back(field, "1");
  for (const SortKey& key : shape.sort) {
    if (!has(key.field)) keys.emplace_back(key.field, key.direction < 0 ? "-1" : "1");
  }
  for (const std::string& field : shape.range) {
    if (!has(field)) keys.emplace_back(field, "1");
  }
  return keys;
}

std::string index_keys_text(const std::vector<std::pair<std::string, std::string>>& keys) {
  std::string out = "{";
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto& [field, type] = keys[i];
    out += i ? ", " : "";
    out += is_identifier(field) ? field : "\"" + field + "\"";
    out += ": ";
    out += is_direction(type) ? type : "\"" + type + "\"";
  }
  return out + "}";
}

}  // namespace docguard::rules
