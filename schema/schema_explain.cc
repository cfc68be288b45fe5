// The server's errInfo.details for a document that fails a $jsonSchema: each failing keyword
// as one entry, in the order the server's parser adds them (scalars, arrays, objects, logic,
// then the type), with the field names and reasons of doc_validation_error.cpp. Only called
// for a failing document, so it may allocate.
#include "schema_explain.h"

#include <cmath>
#include <string>
#include <vector>

#include "docguard/schema/json_schema.h"
#include "schema_explain_out.h"
#include "schema_node.h"

namespace docguard::schema {

namespace {

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
  const auto x = decode_number(v);
  if (!x) return;
  if (!multiple_of_holds(n, *x)) {
    simple(out, n, "multipleOf", "considered value is not a multiple of the specified value", v,
           {"multipleOf"});
  }
  if (!maximum_holds(n, *x)) {
    if (n.exclusive_maximum) {
      simple(out, n, "maximum", "comparison failed", v, {"maximum", "exclusiveMaximum"});
    } else {
      simple(out, n, "maximum", "comparison failed", v, {"maximum"});
    }
  }
  if (!minimum_holds(n, *x)) {
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
    if (const auto duplicate = first_duplicate(v)) {
      EntryOut e(out);
      operator_name(e.get(), "uniqueItems");
      specified_as(e.get(), n, {"uniqueItems"});
      bson_append_utf8(e.get(), "reason", -1, "found a duplicate item", -1);
      append_value(e.get(), "consideredValue", v);
      append_value(e.get(), "duplicatedValue", *duplicate);
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
      // A list position is a long in the server's entry (the object form's index is an int).
      bson_append_int64(item.get(), "itemIndex", -1, i);
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
    if (found) return;
    bool any_document = false;
    for (codec::BsonElements el(n.enum_values.data(), static_cast<uint32_t>(n.enum_values.size()));
         !any_document && el.next();) {
      any_document = el.holds_document();
    }
    if (n.root && !any_document) {
      // No document can equal a top-level enum without objects: the server's parser makes it
      // "always false" and reports it so.
      EntryOut e(out);
      operator_name(e.get(), "enum");
      specified_as(e.get(), n, {"enum"});
      bson_append_utf8(e.get(), "reason", -1, "expression always evaluates to false", -1);
    } else {
      simple(out, n, "enum", "value was not found in enum", v, {"enum"});
    }
  }
}

// The types a keyword of the value's kind restricts (minLength: strings; minimum: every number).
TypeMask restricted_types(uint8_t type) {
  switch (type) {
    case BSON_TYPE_INT32:
    case BSON_TYPE_INT64:
    case BSON_TYPE_DOUBLE:
    case BSON_TYPE_DECIMAL128:
      return type_bit(BSON_TYPE_INT32) | type_bit(BSON_TYPE_INT64) | type_bit(BSON_TYPE_DOUBLE) |
             type_bit(BSON_TYPE_DECIMAL128);
    default:
      return type_bit(type);
  }
}

}  // namespace

void explain_entries(const Node& n, const Value& v, bson_t* array) {
  // The caller's array is continued: keys follow the entries already in it.
  ArrayOut out_view(array);
  // Under one stated type, the server's parser drops the keywords of other kinds (a minimum
  // under bsonType "string"): they have no entry even when the value's own kind fails them.
  const bool inactive = n.has_type && n.single_type && (n.types & restricted_types(v.type)) == 0;
  switch (inactive ? uint8_t{BSON_TYPE_EOD} : v.type) {
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

}  // namespace docguard::schema
