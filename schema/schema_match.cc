// Judging a value against a compiled schema: one walk over each object's fields, no
// allocation. Each keyword restricted to a type (minimum to numbers, minLength to strings,
// minItems to arrays, properties to objects, ...) passes values of other types, as the server
// translates them.
#include "docguard/schema/json_schema.h"
#include "schema_node.h"

namespace docguard::schema {

namespace {

bool string_matches(const Node& n, const Value& v) {
  const std::string_view text = v.utf8();
  if (n.pattern && !n.pattern->matches(text)) return false;
  if (n.max_length || n.min_length) {
    const uint64_t length = code_points(text);
    if (n.max_length && length > *n.max_length) return false;
    if (n.min_length && length < *n.min_length) return false;
  }
  return true;
}

bool number_matches(const Node& n, const Value& v) {
  if (!n.multiple_of && !n.maximum && !n.minimum) return true;
  const auto x = decode_number(v);
  if (!x) return true;
  return multiple_of_holds(n, *x) && maximum_holds(n, *x) && minimum_holds(n, *x);
}

bool array_matches(const Node& n, const Value& v) {
  if (n.max_items || n.min_items) {
    const uint32_t count = element_count(v);
    if (n.max_items && count > *n.max_items) return false;
    if (n.min_items && count < *n.min_items) return false;
  }
  if (n.unique_items && first_duplicate(v)) return false;
  if (n.items || n.has_item_list) {
    size_t i = 0;
    for (codec::BsonElements e(v.data, v.size); e.next(); ++i) {
      const Value item = Value::of(e);
      if (n.items) {
        if (!node_matches(*n.items, item)) return false;
      } else if (i < n.item_list.size()) {
        if (!node_matches(n.item_list[i], item)) return false;
      } else if (n.additional_items == Additional::kForbidden) {
        return false;
      } else if (n.additional_items == Additional::kSchema) {
        if (!node_matches(*n.additional_items_schema, item)) return false;
      } else {
        break;
      }
    }
  }
  return true;
}

// The dotted names of `properties` and `required`: paths, judged apart from the field walk.
bool dotted_properties_match(const Node& n, const Value& v, uint64_t* required_seen) {
  for (const Property& p : n.properties) {
    if (!p.dotted) continue;
    if (p.schema) {
      Value value;
      if (value_at(v, p.name, &value) == At::kFound && !node_matches(*p.schema, value)) {
        return false;
      }
    }
    if (p.required_index >= 0 && p.required_index < 64 && path_exists(v, p.name)) {
      *required_seen |= uint64_t{1} << p.required_index;
    }
  }
  return true;
}

bool object_matches(const Node& n, const Value& v) {
  const bool look_up = !n.properties.empty();
  const bool allowed = !n.pattern_properties.empty() ||
                       n.additional_properties == Additional::kForbidden ||
                       n.additional_properties == Additional::kSchema;
  const bool few_required = n.required.size() <= 64;
  uint64_t required_seen = 0;
  uint64_t fields = 0;
  if (look_up || allowed || n.max_properties || n.min_properties) {
    for (codec::BsonElements e(v.data, v.size); e.next();) {
      ++fields;
      const Property* p = look_up ? n.property(e.key) : nullptr;
      const Value field = Value::of(e);
      // A field named like a dotted property is only allowed by it (additionalProperties).
      if (p != nullptr && !p->dotted) {
        if (p->required_index >= 0 && few_required) {
          required_seen |= uint64_t{1} << p->required_index;
        }
        if (p->schema && !node_matches(*p->schema, field)) return false;
      }
      if (!allowed) continue;
      bool by_pattern = false;
      for (const PatternProperty& pp : n.pattern_properties) {
        if (pp.regex->matches(e.key)) {
          by_pattern = true;
          if (!node_matches(*pp.schema, field)) return false;
        }
      }
      if (by_pattern || (p != nullptr && p->schema)) continue;
      if (n.additional_properties == Additional::kForbidden) return false;
      if (n.additional_properties == Additional::kSchema &&
          !node_matches(*n.additional_properties_schema, field)) {
        return false;
      }
    }
  }
  if (n.has_dotted_properties && !dotted_properties_match(n, v, &required_seen)) return false;
  if (!n.required.empty()) {
    if (few_required) {
      const uint64_t all =
          n.required.size() == 64 ? ~uint64_t{0} : (uint64_t{1} << n.required.size()) - 1;
      if (required_seen != all) return false;
    } else {
      for (const std::string& name : n.required) {
        if (!path_exists(v, name)) return false;
      }
    }
  }
  if (n.max_properties && fields > *n.max_properties) return false;
  if (n.min_properties && fields < *n.min_properties) return false;
  for (const Dependency& d : n.dependencies) {
    if (!path_exists(v, d.property)) continue;
    for (const std::string& name : d.required) {
      if (!path_exists(v, name)) return false;
    }
    if (d.schema && !node_matches(*d.schema, v)) return false;
  }
  return true;
}

bool logic_matches(const Node& n, const Value& v) {
  for (const Node& sub : n.all_of) {
    if (!node_matches(sub, v)) return false;
  }
  if (!n.any_of.empty()) {
    bool any = false;
    for (const Node& sub : n.any_of) {
      if (node_matches(sub, v)) {
        any = true;
        break;
      }
    }
    if (!any) return false;
  }
  if (!n.one_of.empty()) {
    int matched = 0;
    for (const Node& sub : n.one_of) {
      if (node_matches(sub, v) && ++matched > 1) return false;
    }
    if (matched != 1) return false;
  }
  if (n.not_schema && node_matches(*n.not_schema, v)) return false;
  if (!n.enum_values.empty()) {
    bool found = false;
    for (codec::BsonElements e(n.enum_values.data(), static_cast<uint32_t>(n.enum_values.size()));
         e.next();) {
      if (values_equal(v, Value::of(e))) {
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

}  // namespace

bool multiple_of_holds(const Node& n, const Number& x) {
  return !n.multiple_of || is_multiple_of(x, *n.multiple_of);
}
bool maximum_holds(const Node& n, const Number& x) {
  return !n.maximum ||
         compares(x, n.exclusive_maximum ? Comparison::kLess : Comparison::kLessEqual, *n.maximum);
}
bool minimum_holds(const Node& n, const Number& x) {
  return !n.minimum ||
         compares(x, n.exclusive_minimum ? Comparison::kGreater : Comparison::kGreaterEqual,
                  *n.minimum);
}

bool node_matches(const Node& n, const Value& v) {
  if (n.has_type && (n.types & type_bit(v.type)) == 0) return false;
  switch (v.type) {
    case BSON_TYPE_UTF8:
      if (!string_matches(n, v)) return false;
      break;
    case BSON_TYPE_INT32:
    case BSON_TYPE_INT64:
    case BSON_TYPE_DOUBLE:
    case BSON_TYPE_DECIMAL128:
      if (!number_matches(n, v)) return false;
      break;
    case BSON_TYPE_ARRAY:
      if (!array_matches(n, v)) return false;
      break;
    case BSON_TYPE_DOCUMENT:
      if (!object_matches(n, v)) return false;
      break;
    default:
      break;
  }
  return logic_matches(n, v);
}

}  // namespace docguard::schema

namespace docguard::schema {

bool JsonSchema::matches(const codec::BsonView& document) const {
  if (always_false_) return false;
  if (document.empty()) return true;
  // The top level's type includes "object" here (always_false_ otherwise): it passes.
  return schema::node_matches(*root_, schema::Value::document(document));
}

}  // namespace docguard::schema
