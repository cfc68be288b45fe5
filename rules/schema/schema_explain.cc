// The server's errInfo.details for a document that fails a $jsonSchema: each failing keyword
// as one entry, in the order the server's parser adds them (scalars, arrays, objects, logic,
// then the type), with the field names and reasons of doc_validation_error.cpp. Only called
// for a failing document, so it may allocate.
#include "schema_explain.h"

#include <cmath>
#include <string>
#include <vector>

#include "docguard/rules/json_schema.h"
#include "schema_node.h"

namespace docguard::rules::schema {

namespace {

// A BSON array being appended to: keys "0", "1", ...
class ArrayOut {
 public:
  // A new array `key` in `parent`, closed when this goes out of scope.
  ArrayOut(bson_t* parent, const char* key) : parent_(parent), target_(&own_) {
    bson_append_array_begin(parent_, key, -1, &own_);
  }
  // An array already open elsewhere, continued after its last entry.
  explicit ArrayOut(bson_t* open) : target_(open), count_(bson_count_keys(open)) {}
  ~ArrayOut() {
    if (parent_ != nullptr) bson_append_array_end(parent_, &own_);
  }
  ArrayOut(const ArrayOut&) = delete;
  ArrayOut& operator=(const ArrayOut&) = delete;
  bson_t* get() { return target_; }
  std::string next_key() { return std::to_string(count_++); }

 private:
  bson_t* parent_ = nullptr;
  bson_t own_{};
  bson_t* target_;
  uint32_t count_ = 0;
};

// One entry of an ArrayOut, open while in scope.
class EntryOut {
 public:
  explicit EntryOut(ArrayOut& list) : list_(list) {
    const std::string key = list.next_key();
    bson_append_document_begin(list.get(), key.c_str(), -1, &doc_);
  }
  ~EntryOut() { bson_append_document_end(list_.get(), &doc_); }
  EntryOut(const EntryOut&) = delete;
  EntryOut& operator=(const EntryOut&) = delete;
  bson_t* get() { return &doc_; }

 private:
  ArrayOut& list_;
  bson_t doc_;
};

// The keyword's element in the subschema as written.
bool find_keyword(const Node& n, const char* keyword, bson_iter_t* it) {
  return bson_iter_init_from_data(it, n.source.data(), n.source.size()) &&
         bson_iter_find(it, keyword);
}

// specifiedAs: {keyword: as written, ...} for each keyword present.
void specified_as(bson_t* entry, const Node& n, std::initializer_list<const char*> keywords) {
  bson_t spec;
  bson_append_document_begin(entry, "specifiedAs", -1, &spec);
  for (const char* k : keywords) {
    bson_iter_t it;
    if (find_keyword(n, k, &it)) bson_append_iter(&spec, k, -1, &it);
  }
  bson_append_document_end(entry, &spec);
}

void operator_name(bson_t* entry, const char* name) {
  bson_append_utf8(entry, "operatorName", -1, name, -1);
}

void title_description(bson_t* entry, const Node& n) {
  if (n.has_title)
    bson_append_utf8(entry, "title", -1, n.title.data(), static_cast<int>(n.title.size()));
  if (n.has_description) {
    bson_append_utf8(entry, "description", -1, n.description.data(),
                     static_cast<int>(n.description.size()));
  }
}

void utf8(bson_t* doc, const char* key, std::string_view text) {
  bson_append_utf8(doc, key, -1, text.data(), static_cast<int>(text.size()));
}

// A simple keyword's entry: {operatorName, specifiedAs, reason, consideredValue}.
void simple(ArrayOut& out, const Node& n, const char* keyword, const char* reason, const Value& v,
            std::initializer_list<const char*> spec_keywords) {
  EntryOut e(out);
  operator_name(e.get(), keyword);
  specified_as(e.get(), n, spec_keywords);
  bson_append_utf8(e.get(), "reason", -1, reason, -1);
  append_value(e.get(), "consideredValue", v);
}

// {..., details: [entries of `sub` for `v`]}
void details_of(bson_t* entry, const Node& sub, const Value& v) {
  ArrayOut details(entry, "details");
  explain_entries(sub, v, details.get());
}

void explain_string(const Node& n, const Value& v, ArrayOut& out) {
  const std::string_view text = v.utf8();
  if (n.pattern && !n.pattern->matches(text)) {
    simple(out, n, "pattern", "regular expression did not match", v, {"pattern"});
  }
  const uint64_t length = code_points(text);
  if (n.max_length && length > *n.max_length) {
    simple(out, n, "maxLength", "specified string length was not satisfied", v, {"maxLength"});
  }
  if (n.min_length && length < *n.min_length) {
    simple(out, n, "minLength", "specified string length was not satisfied", v, {"minLength"});
  }
}

void explain_number(const Node& n, const Value& v, ArrayOut& out) {
  const auto x = number_of(v);
  if (!x) return;
  if (n.multiple_of && std::fmod(*x, *n.multiple_of) != 0) {
    simple(out, n, "multipleOf", "considered value is not a multiple of the specified value", v,
           {"multipleOf"});
  }
  if (n.maximum && (n.exclusive_maximum ? !(*x < *n.maximum) : !(*x <= *n.maximum))) {
    if (n.exclusive_maximum) {
      simple(out, n, "maximum", "comparison failed", v, {"maximum", "exclusiveMaximum"});
    } else {
      simple(out, n, "maximum", "comparison failed", v, {"maximum"});
    }
  }
  if (n.minimum && (n.exclusive_minimum ? !(*x > *n.minimum) : !(*x >= *n.minimum))) {
    if (n.exclusive_minimum) {
      simple(out, n, "minimum", "comparison failed", v, {"minimum", "exclusiveMinimum"});
    } else {
      simple(out, n, "minimum", "comparison failed", v, {"minimum"});
    }
  }
}

void items_count(ArrayOut& out, const Node& n, const char* keyword, const Value& v,
                 uint32_t count) {
  EntryOut e(out);
  operator_name(e.get(), keyword);
  specified_as(e.get(), n, {keyword});
  bson_append_utf8(e.get(), "reason", -1, "array did not match specified length", -1);
  append_value(e.get(), "consideredValue", v);
  bson_append_int32(e.get(), "numberOfItems", -1, static_cast<int32_t>(count));
}

void explain_array(const Node& n, const Value& v, ArrayOut& out) {
  const uint32_t count = element_count(v);
  if (n.max_items && count > *n.max_items) items_count(out, n, "maxItems", v, count);
  if (n.min_items && count < *n.min_items) items_count(out, n, "minItems", v, count);
  if (n.unique_items) {
    bool done = false;
    for (codec::BsonElements a(v.data, v.size); !done && a.next();) {
      codec::BsonElements b = a;
      while (b.next()) {
        if (values_equal(Value::of(a), Value::of(b))) {
          EntryOut e(out);
          operator_name(e.get(), "uniqueItems");
          specified_as(e.get(), n, {"uniqueItems"});
          bson_append_utf8(e.get(), "reason", -1, "found a duplicate item", -1);
          append_value(e.get(), "consideredValue", v);
          append_value(e.get(), "duplicatedValue", Value::of(a));
          done = true;
          break;
        }
      }
    }
  }
  if (n.items) {
    int32_t i = 0;
    for (codec::BsonElements el(v.data, v.size); el.next(); ++i) {
      if (node_matches(*n.items, Value::of(el))) continue;
      EntryOut e(out);
      operator_name(e.get(), "items");
      title_description(e.get(), *n.items);
      bson_append_utf8(e.get(), "reason", -1, "At least one item did not match the sub-schema", -1);
      bson_append_int32(e.get(), "itemIndex", -1, i);
      details_of(e.get(), *n.items, Value::of(el));
      break;
    }
  }
  if (!n.has_item_list) return;
  // items: [schemas]: every position that fails, in one entry.
  bool any = false;
  {
    int32_t i = 0;
    for (codec::BsonElements el(v.data, v.size);
         el.next() && static_cast<size_t>(i) < n.item_list.size(); ++i) {
      if (!node_matches(n.item_list[static_cast<size_t>(i)], Value::of(el))) any = true;
    }
  }
  if (any) {
    EntryOut e(out);
    operator_name(e.get(), "items");
    ArrayOut details(e.get(), "details");
    int32_t i = 0;
    for (codec::BsonElements el(v.data, v.size);
         el.next() && static_cast<size_t>(i) < n.item_list.size(); ++i) {
      const Node& sub = n.item_list[static_cast<size_t>(i)];
      if (node_matches(sub, Value::of(el))) continue;
      EntryOut item(details);
      bson_append_int32(item.get(), "itemIndex", -1, i);
      details_of(item.get(), sub, Value::of(el));
    }
  }
  if (n.additional_items == Additional::kForbidden && count > n.item_list.size()) {
    EntryOut e(out);
    operator_name(e.get(), "additionalItems");
    specified_as(e.get(), n, {"additionalItems"});
    bson_append_utf8(e.get(), "reason", -1, "found additional items", -1);
    ArrayOut extra(e.get(), "additionalItems");
    size_t i = 0;
    for (codec::BsonElements el(v.data, v.size); el.next(); ++i) {
      if (i >= n.item_list.size())
        append_value(extra.get(), extra.next_key().c_str(), Value::of(el));
    }
  } else if (n.additional_items == Additional::kSchema) {
    int32_t i = 0;
    for (codec::BsonElements el(v.data, v.size); el.next(); ++i) {
      if (static_cast<size_t>(i) < n.item_list.size()) continue;
      const Node& sub = *n.additional_items_schema;
      if (node_matches(sub, Value::of(el))) continue;
      EntryOut e(out);
      operator_name(e.get(), "additionalItems");
      title_description(e.get(), sub);
      bson_append_utf8(e.get(), "reason", -1,
                       "At least one additional item did not match the sub-schema", -1);
      bson_append_int32(e.get(), "itemIndex", -1, i);
      details_of(e.get(), sub, Value::of(el));
      break;
    }
  }
}

bool has_field(const Value& object, std::string_view name, Value* out = nullptr) {
  for (codec::BsonElements e(object.data, object.size); e.next();) {
    if (e.key == name) {
      if (out != nullptr) *out = Value::of(e);
      return true;
    }
  }
  return false;
}

bool in_properties(const Node& n, std::string_view key) {
  const Property* p = n.property(key);
  return p != nullptr && p->schema != nullptr;
}

bool by_pattern(const Node& n, std::string_view key) {
  for (const PatternProperty& pp : n.pattern_properties) {
    if (pp.regex->matches(key)) return true;
  }
  return false;
}

void explain_object(const Node& n, const Value& v, ArrayOut& out) {
  // properties, in the order written.
  bson_iter_t props;
  if (n.has_properties && find_keyword(n, "properties", &props) &&
      BSON_ITER_HOLDS_DOCUMENT(&props)) {
    bool any = false;
    bson_iter_t child;
    if (bson_iter_recurse(&props, &child)) {
      while (bson_iter_next(&child)) {
        Value field;
        const Property* p = n.property(bson_iter_key(&child));
        if (p && p->schema && has_field(v, p->name, &field) && !node_matches(*p->schema, field))
          any = true;
      }
    }
    if (any && bson_iter_recurse(&props, &child)) {
      EntryOut e(out);
      operator_name(e.get(), "properties");
      ArrayOut list(e.get(), "propertiesNotSatisfied");
      while (bson_iter_next(&child)) {
        Value field;
        const Property* p = n.property(bson_iter_key(&child));
        if (!p || !p->schema || !has_field(v, p->name, &field) || node_matches(*p->schema, field))
          continue;
        EntryOut item(list);
        utf8(item.get(), "propertyName", p->name);
        title_description(item.get(), *p->schema);
        details_of(item.get(), *p->schema, field);
      }
    }
  }
  // additionalProperties, then patternProperties (one server expression for both).
  if (n.additional_properties == Additional::kForbidden) {
    bool any = false;
    for (codec::BsonElements e(v.data, v.size); e.next();) {
      if (!in_properties(n, e.key) && !by_pattern(n, e.key)) any = true;
    }
    if (any) {
      EntryOut e(out);
      operator_name(e.get(), "additionalProperties");
      specified_as(e.get(), n, {"additionalProperties"});
      ArrayOut names(e.get(), "additionalProperties");
      for (codec::BsonElements f(v.data, v.size); f.next();) {
        if (!in_properties(n, f.key) && !by_pattern(n, f.key)) {
          utf8(names.get(), names.next_key().c_str(), f.key);
        }
      }
    }
  } else if (n.additional_properties == Additional::kSchema) {
    const Node& sub = *n.additional_properties_schema;
    for (codec::BsonElements f(v.data, v.size); f.next();) {
      if (in_properties(n, f.key) || by_pattern(n, f.key) || node_matches(sub, Value::of(f)))
        continue;
      EntryOut e(out);
      operator_name(e.get(), "additionalProperties");
      title_description(e.get(), sub);
      bson_append_utf8(e.get(), "reason", -1,
                       "at least one additional property did not match the subschema", -1);
      utf8(e.get(), "failingProperty", f.key);
      details_of(e.get(), sub, Value::of(f));
      break;
    }
  }
  if (!n.pattern_properties.empty()) {
    bool any = false;
    for (codec::BsonElements f(v.data, v.size); f.next();) {
      for (const PatternProperty& pp : n.pattern_properties) {
        if (pp.regex->matches(f.key) && !node_matches(*pp.schema, Value::of(f))) any = true;
      }
    }
    if (any) {
      EntryOut e(out);
      operator_name(e.get(), "patternProperties");
      ArrayOut list(e.get(), "details");
      for (codec::BsonElements f(v.data, v.size); f.next();) {
        for (const PatternProperty& pp : n.pattern_properties) {
          if (!pp.regex->matches(f.key) || node_matches(*pp.schema, Value::of(f))) continue;
          EntryOut item(list);
          utf8(item.get(), "propertyName", f.key);
          title_description(item.get(), *pp.schema);
          utf8(item.get(), "regexMatched", pp.regex->source());
          details_of(item.get(), *pp.schema, Value::of(f));
        }
      }
    }
  }
  if (!n.required.empty()) {
    bool any = false;
    for (const std::string& name : n.required) any = any || !has_field(v, name);
    if (any) {
      EntryOut e(out);
      operator_name(e.get(), "required");
      specified_as(e.get(), n, {"required"});
      ArrayOut missing(e.get(), "missingProperties");
      for (const std::string& name : n.required) {
        if (!has_field(v, name)) utf8(missing.get(), missing.next_key().c_str(), name);
      }
    }
  }
  const uint32_t fields = element_count(v);
  auto count_entry = [&](const char* keyword) {
    EntryOut e(out);
    operator_name(e.get(), keyword);
    specified_as(e.get(), n, {keyword});
    bson_append_utf8(e.get(), "reason", -1, "specified number of properties was not satisfied", -1);
    bson_append_int32(e.get(), "numberOfProperties", -1, static_cast<int32_t>(fields));
  };
  if (n.min_properties && fields < *n.min_properties) count_entry("minProperties");
  if (n.max_properties && fields > *n.max_properties) count_entry("maxProperties");
  if (!n.dependencies.empty()) {
    auto fails = [&](const Dependency& d) {
      if (!has_field(v, d.property)) return false;
      for (const std::string& name : d.required) {
        if (!has_field(v, name)) return true;
      }
      return d.schema && !node_matches(*d.schema, v);
    };
    bool any = false;
    for (const Dependency& d : n.dependencies) any = any || fails(d);
    if (any) {
      EntryOut e(out);
      operator_name(e.get(), "dependencies");
      ArrayOut list(e.get(), "failingDependencies");
      for (const Dependency& d : n.dependencies) {
        if (!fails(d)) continue;
        EntryOut item(list);
        utf8(item.get(), "conditionalProperty", d.property);
        if (d.schema) {
          details_of(item.get(), *d.schema, v);
        } else {
          ArrayOut missing(item.get(), "missingProperties");
          for (const std::string& name : d.required) {
            if (!has_field(v, name)) utf8(missing.get(), missing.next_key().c_str(), name);
          }
        }
      }
    }
  }
}

void schemas_not_satisfied(bson_t* entry, const std::vector<Node>& subs, const Value& v) {
  ArrayOut list(entry, "schemasNotSatisfied");
  for (size_t i = 0; i < subs.size(); ++i) {
    if (node_matches(subs[i], v)) continue;
    EntryOut item(list);
    bson_append_int32(item.get(), "index", -1, static_cast<int32_t>(i));
    title_description(item.get(), subs[i]);
    details_of(item.get(), subs[i], v);
  }
}

void explain_logic(const Node& n, const Value& v, ArrayOut& out) {
  bool all = true;
  for (const Node& sub : n.all_of) all = all && node_matches(sub, v);
  if (!all) {
    EntryOut e(out);
    operator_name(e.get(), "allOf");
    schemas_not_satisfied(e.get(), n.all_of, v);
  }
  if (!n.any_of.empty()) {
    bool any = false;
    for (const Node& sub : n.any_of) any = any || node_matches(sub, v);
    if (!any) {
      EntryOut e(out);
      operator_name(e.get(), "anyOf");
      schemas_not_satisfied(e.get(), n.any_of, v);
    }
  }
  if (!n.one_of.empty()) {
    std::vector<int32_t> matching;
    for (size_t i = 0; i < n.one_of.size(); ++i) {
      if (node_matches(n.one_of[i], v)) matching.push_back(static_cast<int32_t>(i));
    }
    if (matching.empty()) {
      EntryOut e(out);
      operator_name(e.get(), "oneOf");
      schemas_not_satisfied(e.get(), n.one_of, v);
    } else if (matching.size() > 1) {
      EntryOut e(out);
      operator_name(e.get(), "oneOf");
      bson_append_utf8(e.get(), "reason", -1, "more than one subschema matched", -1);
      ArrayOut indexes(e.get(), "matchingSchemaIndexes");
      for (int32_t i : matching)
        bson_append_int32(indexes.get(), indexes.next_key().c_str(), -1, i);
    }
  }
  if (n.not_schema && node_matches(*n.not_schema, v)) {
    EntryOut e(out);
    operator_name(e.get(), "not");
    bson_append_utf8(e.get(), "reason", -1, "child expression matched", -1);
  }
  if (!n.enum_values.empty()) {
    bool found = false;
    for (codec::BsonElements el(n.enum_values.data(), static_cast<uint32_t>(n.enum_values.size()));
         !found && el.next();) {
      found = values_equal(v, Value::of(el));
    }
    if (!found) simple(out, n, "enum", "value was not found in enum", v, {"enum"});
  }
}

}  // namespace

void explain_entries(const Node& n, const Value& v, bson_t* array) {
  // The caller's array is continued: keys follow the entries already in it.
  ArrayOut out_view(array);
  switch (v.type) {
    case BSON_TYPE_UTF8:
      explain_string(n, v, out_view);
      break;
    case BSON_TYPE_INT32:
    case BSON_TYPE_INT64:
    case BSON_TYPE_DOUBLE:
    case BSON_TYPE_DECIMAL128:
      explain_number(n, v, out_view);
      break;
    case BSON_TYPE_ARRAY:
      explain_array(n, v, out_view);
      break;
    case BSON_TYPE_DOCUMENT:
      explain_object(n, v, out_view);
      break;
    default:
      break;
  }
  explain_logic(n, v, out_view);
  if (n.has_type && (n.types & type_bit(v.type)) == 0) {
    EntryOut e(out_view);
    operator_name(e.get(), n.type_is_bson ? "bsonType" : "type");
    specified_as(e.get(), n, {n.type_is_bson ? "bsonType" : "type"});
    bson_append_utf8(e.get(), "reason", -1, "type did not match", -1);
    append_value(e.get(), "consideredValue", v);
    bson_append_utf8(e.get(), "consideredType", -1, type_name(v.type), -1);
  }
}

}  // namespace docguard::rules::schema
