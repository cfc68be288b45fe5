// What a document or an operator update does to a schema, explained as the server would:
// JsonSchema::explain for a whole document, JsonSchema::judge_update for the paths an update
// writes. An update is judged without the stored document: a value set is judged against the
// schema of its path, a removed field against `required`; where the outcome depends on what is
// stored (an $inc, a $push, an object keyword such as minProperties or allOf above the path),
// the change is not guessed: kUnjudged, unless nothing in the schema constrains the path.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/codec/bson_elements.h"
#include "docguard/schema/json_schema.h"
#include "schema_explain.h"
#include "schema_node.h"

namespace docguard::schema {

using schema::Additional;
using schema::Node;
using schema::Value;

namespace {

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    out.push_back(path.substr(start, dot == std::string_view::npos ? path.npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return out;
}

bool positional(std::string_view segment) {
  if (segment.empty()) return true;
  if (segment.front() == '$') return true;
  for (char c : segment) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

void begin_entry(bson_t* array, bson_t* entry) {
  const std::string key = std::to_string(bson_count_keys(array));
  bson_append_document_begin(array, key.c_str(), -1, entry);
}

void title_description(bson_t* entry, const Node& n) {
  if (n.has_title) bson_append_utf8(entry, "title", -1, n.title.c_str(), -1);
  if (n.has_description) bson_append_utf8(entry, "description", -1, n.description.c_str(), -1);
}

// How a child schema applies to a field of an object.
enum class Via { kProperties, kPattern, kAdditional };
struct Child {
  const Node* node;
  Via via;
  const schema::Regex* regex = nullptr;
};

class UpdateJudge {
 public:
  UpdateJudge(const Node& root, bson_t* out) : root_(root), out_(out) {}

  // A path set to `value` (null: a value that depends on the stored one).
  UpdateJudgement written(std::string_view path, const Value* value) {
    return walk(root_, split_path(path), 0, value, false, true, out_);
  }
  UpdateJudgement removed(std::string_view path) {
    return walk(root_, split_path(path), 0, nullptr, true, true, out_);
  }

 private:
  // Judges segments[i..] under `n`; on kFail appends the failing entries to `out` (if any).
  // `present`: the object `n` judges is in every stored document the update could leave valid
  // (the root; a field its parent requires, whose schema says it is an object). Where it may
  // be absent, removing under it changes nothing, and setting under it creates it: neither
  // outcome can be told without the stored document.
  UpdateJudgement walk(const Node& n, const std::vector<std::string_view>& segments, size_t i,
                       const Value* value, bool removal, bool present, bson_t* out) {
    if (!n.constrains) return UpdateJudgement::kPass;
    const std::string_view seg = segments[i];
    // A dotted property name is a path the update's own segments do not follow one by one.
    if (positional(seg) || n.has_whole_object_keywords() || n.has_dotted_properties) {
      return UpdateJudgement::kUnjudged;
    }
    const bool last = i + 1 == segments.size();
    if (removal && last) {
      for (const std::string& name : n.required) {
        if (name != seg) continue;
        if (!present) return UpdateJudgement::kUnjudged;
        if (out != nullptr) {
          bson_t e;
          begin_entry(out, &e);
          bson_append_utf8(&e, "operatorName", -1, "required", -1);
          bson_t spec;
          bson_append_document_begin(&e, "specifiedAs", -1, &spec);
          const codec::BsonView source{n.source.data(), static_cast<uint32_t>(n.source.size())};
          codec::BsonElements required(source);
          if (codec::well_framed(source) && required.find("required")) {
            required.append_to(&spec, "required");
          }
          bson_append_document_end(&e, &spec);
          bson_t missing;
          bson_append_array_begin(&e, "missingProperties", -1, &missing);
          bson_append_utf8(&missing, "0", -1, name.c_str(), -1);
          bson_append_array_end(&e, &missing);
          bson_append_document_end(out, &e);
        }
        return UpdateJudgement::kFail;
      }
      return UpdateJudgement::kPass;
    }
    // The schemas that apply to field `seg` of this object.
    Child children[8];
    size_t count = 0;
    bool more = false;
    const schema::Property* p = n.property(seg);
    if (p != nullptr && p->schema) children[count++] = {p->schema.get(), Via::kProperties};
    bool by_pattern = false;
    for (const schema::PatternProperty& pp : n.pattern_properties) {
      if (!pp.regex->matches(seg)) continue;
      by_pattern = true;
      if (count < 8) {
        children[count++] = {pp.schema.get(), Via::kPattern, pp.regex.get()};
      } else {
        more = true;
      }
    }
    if ((p == nullptr || !p->schema) && !by_pattern) {
      if (n.additional_properties == Additional::kForbidden && !removal) {
        if (out != nullptr) {
          bson_t e;
          begin_entry(out, &e);
          bson_append_utf8(&e, "operatorName", -1, "additionalProperties", -1);
          bson_t spec;
          bson_append_document_begin(&e, "specifiedAs", -1, &spec);
          bson_append_bool(&spec, "additionalProperties", -1, false);
          bson_append_document_end(&e, &spec);
          bson_t names;
          bson_append_array_begin(&e, "additionalProperties", -1, &names);
          bson_append_utf8(&names, "0", -1, seg.data(), static_cast<int>(seg.size()));
          bson_append_array_end(&e, &names);
          bson_append_document_end(out, &e);
        }
        return UpdateJudgement::kFail;
      }
      if (n.additional_properties == Additional::kSchema) {
        children[count++] = {n.additional_properties_schema.get(), Via::kAdditional};
      }
    }
    if (more) return UpdateJudgement::kUnjudged;
    if (last && removal) return UpdateJudgement::kPass;
    UpdateJudgement result = UpdateJudgement::kPass;
    for (size_t c = 0; c < count; ++c) {
      const Child& child = children[c];
      UpdateJudgement r;
      bson_t inner = BSON_INITIALIZER;
      if (last) {
        if (value == nullptr) {
          r = child.node->constrains ? UpdateJudgement::kUnjudged : UpdateJudgement::kPass;
        } else {
          r = schema::node_matches(*child.node, *value) ? UpdateJudgement::kPass
                                                        : UpdateJudgement::kFail;
          if (r == UpdateJudgement::kFail && out != nullptr) {
            schema::explain_entries(*child.node, *value, &inner);
          }
        }
      } else {
        const bool child_present = present && surely_object(*child.node) && n.is_required(seg);
        r = walk(*child.node, segments, i + 1, value, removal, child_present,
                 out != nullptr ? &inner : nullptr);
        // A $set under a parent that may be absent creates it with one field: whether the new
        // object satisfies the parent's schema (its other required fields, its type) is unknown.
        if (r == UpdateJudgement::kPass && !removal && !child_present &&
            may_reject_new_object(*child.node, segments[i + 1])) {
          r = UpdateJudgement::kUnjudged;
        }
      }
      if (r == UpdateJudgement::kFail && out != nullptr) wrap(out, child, seg, &inner);
      bson_destroy(&inner);
      if (r == UpdateJudgement::kFail) return r;
      if (r == UpdateJudgement::kUnjudged) result = r;
    }
    return result;
  }

  static bool surely_object(const Node& n) {
    return n.has_type && n.types == schema::type_bit(BSON_TYPE_DOCUMENT);
  }
  // Whether {field: value}, a new object, could fail `n` for a reason other than the value.
  static bool may_reject_new_object(const Node& n, std::string_view field) {
    if (n.has_type && (n.types & schema::type_bit(BSON_TYPE_DOCUMENT)) == 0) return true;
    return std::any_of(n.required.begin(), n.required.end(),
                       [&](const std::string& name) { return name != field; });
  }

  // The entry naming field `seg` of an object, around the child's failing entries.
  static void wrap(bson_t* out, const Child& child, std::string_view seg, const bson_t* inner) {
    bson_t e;
    begin_entry(out, &e);
    const int seg_len = static_cast<int>(seg.size());
    switch (child.via) {
      case Via::kProperties: {
        bson_append_utf8(&e, "operatorName", -1, "properties", -1);
        bson_t list, item;
        bson_append_array_begin(&e, "propertiesNotSatisfied", -1, &list);
        bson_append_document_begin(&list, "0", -1, &item);
        bson_append_utf8(&item, "propertyName", -1, seg.data(), seg_len);
        title_description(&item, *child.node);
        bson_append_array(&item, "details", -1, inner);
        bson_append_document_end(&list, &item);
        bson_append_array_end(&e, &list);
        break;
      }
      case Via::kPattern: {
        bson_append_utf8(&e, "operatorName", -1, "patternProperties", -1);
        bson_t list, item;
        bson_append_array_begin(&e, "details", -1, &list);
        bson_append_document_begin(&list, "0", -1, &item);
        bson_append_utf8(&item, "propertyName", -1, seg.data(), seg_len);
        title_description(&item, *child.node);
        bson_append_utf8(&item, "regexMatched", -1, child.regex->source().c_str(), -1);
        bson_append_array(&item, "details", -1, inner);
        bson_append_document_end(&list, &item);
        bson_append_array_end(&e, &list);
        break;
      }
      case Via::kAdditional:
        bson_append_utf8(&e, "operatorName", -1, "additionalProperties", -1);
        title_description(&e, *child.node);
        bson_append_utf8(&e, "reason", -1,
                         "at least one additional property did not match the subschema", -1);
        bson_append_utf8(&e, "failingProperty", -1, seg.data(), seg_len);
        bson_append_array(&e, "details", -1, inner);
        break;
    }
    bson_append_document_end(out, &e);
  }

  const Node& root_;
  bson_t* out_;
};

void begin_details(const Node& root, bson_t* parent, const char* key, bson_t* details) {
  bson_append_document_begin(parent, key, -1, details);
  bson_append_utf8(details, "operatorName", -1, "$jsonSchema", -1);
  title_description(details, root);
}

}  // namespace

void JsonSchema::explain(const codec::BsonView& document, bson_t* parent, const char* key) const {
  bson_t details;
  begin_details(*root_, parent, key, &details);
  if (always_false_) {
    if (!schema::explain_bounds.truncated) {
      bson_t spec;
      bson_append_document_begin(&details, "specifiedAs", -1, &spec);
      codec::BsonView s = source();
      bson_t schema_doc;
      if (bson_init_static(&schema_doc, s.data, s.size)) {
        bson_append_document(&spec, "$jsonSchema", -1, &schema_doc);
      }
      bson_append_document_end(&details, &spec);
    }
    bson_append_utf8(&details, "reason", -1, "expression always evaluates to false", -1);
  } else {
    bson_t rules;
    bson_append_array_begin(&details, "schemaRulesNotSatisfied", -1, &rules);
    if (!document.empty()) schema::explain_entries(*root_, Value::document(document), &rules);
    bson_append_array_end(&details, &rules);
  }
  bson_append_document_end(parent, &details);
}

DetailsSize JsonSchema::explain_within(const codec::BsonView& document, size_t limit,
                                       bson_t* parent, const char* key) const {
  // The server's two attempts: the whole error, then a truncated one without specifiedAs and
  // consideredValue(s), which stops taking values at the bound. The values each attempt copies
  // are bounded as it is built, so a failing document of any size costs at most the bound.
  constexpr size_t kBesideValues = size_t{64} * 1024;  // names, reasons and the entries' own keys
  // One attempt: this thread's explain bounds set for it, and reset however it ends (an
  // allocation that throws included), so no later explain inherits them.
  struct Attempt {
    Attempt(bool truncate, size_t budget) { schema::explain_bounds = {budget, false, truncate}; }
    ~Attempt() {
      schema::explain_bounds = {};
      bson_destroy(&doc);
    }
    Attempt(const Attempt&) = delete;
    Attempt& operator=(const Attempt&) = delete;
    bson_t doc = BSON_INITIALIZER;
  };
  const size_t budget = limit > kBesideValues ? limit - kBesideValues : 0;
  for (const bool truncate : {false, true}) {
    Attempt attempt(truncate, budget);
    explain(document, &attempt.doc, key);
    const bool fits = attempt.doc.len <= limit && (truncate || !schema::explain_bounds.exceeded);
    if (fits) {
      bson_concat(parent, &attempt.doc);
      return truncate ? DetailsSize::kTruncated : DetailsSize::kFull;
    }
  }
  return DetailsSize::kTooLarge;
}

UpdateJudgement JsonSchema::judge_update(const codec::BsonView& update, bool upsert,
                                         bson_t* details) const {
  if (always_false_) {
    if (details != nullptr) explain(codec::BsonView{}, details, "details");
    return UpdateJudgement::kFail;
  }
  bson_t entries = BSON_INITIALIZER;
  UpdateJudge judge(*root_, details != nullptr ? &entries : nullptr);
  UpdateJudge unexplained(*root_, nullptr);
  UpdateJudgement result = UpdateJudgement::kPass;
  auto take = [&](UpdateJudgement r) {
    if (r == UpdateJudgement::kFail) result = r;
    if (r == UpdateJudgement::kUnjudged && result == UpdateJudgement::kPass) result = r;
  };
  for (codec::BsonElements op(update); op.next();) {
    if (!op.holds_document()) continue;
    const std::string_view name = op.key;
    for (codec::BsonElements f(op.value, op.value_size); f.next();) {
      if (name == "$set") {
        const Value v = Value::of(f);
        take(judge.written(f.key, &v));
      } else if (name == "$setOnInsert") {
        // Applied only when the update inserts, which depends on what the query matches.
        if (!upsert) break;
        const Value v = Value::of(f);
        if (unexplained.written(f.key, &v) != UpdateJudgement::kPass) {
          take(UpdateJudgement::kUnjudged);
        }
      } else if (name == "$unset") {
        take(judge.removed(f.key));
      } else if (name == "$rename") {
        // From a field no valid document holds, $rename changes nothing: the server validates
        // only a document the update modified.
        if (unexplained.written(f.key, nullptr) == UpdateJudgement::kFail) continue;
        take(judge.removed(f.key));
        take(judge.written(f.utf8(), nullptr));
      } else if (name == "$pull" || name == "$pullAll" || name == "$pop") {
        // They never create a field: on a field no valid document holds, they change nothing
        // (and the server validates only modified documents); elsewhere the result depends on
        // the stored array.
        const UpdateJudgement r = unexplained.written(f.key, nullptr);
        if (r != UpdateJudgement::kFail) take(judge.written(f.key, nullptr));
      } else {
        // $inc, $mul, $min, $max, $push, $addToSet, $pull, $pullAll, $pop, $currentDate,
        // $bit: the result depends on the stored value.
        take(judge.written(f.key, nullptr));
      }
    }
  }
  if (result == UpdateJudgement::kFail && details != nullptr) {
    bson_t d, rules;
    begin_details(*root_, details, "details", &d);
    bson_append_array_begin(&d, "schemaRulesNotSatisfied", -1, &rules);
    schema::merge_update_entries(&entries, &rules);
    bson_append_array_end(&d, &rules);
    bson_append_document_end(details, &d);
  }
  bson_destroy(&entries);
  return result;
}

}  // namespace docguard::schema
