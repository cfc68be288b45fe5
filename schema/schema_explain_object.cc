// The object keywords' entries of a failing document's details, in the server's order.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "schema_explain_out.h"

namespace docguard::schema {

namespace {

// A property's value to judge (a dotted name is a path), as judging finds it.
bool has_field(const Value& object, std::string_view name, Value* out) {
  return value_at(object, name, out) == At::kFound;
}
bool has_field(const Value& object, std::string_view name) { return path_exists(object, name); }

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

}  // namespace

void explain_object(const Node& n, const Value& v, ArrayOut& out) {
  // properties, in the order written.
  codec::BsonElements props(nullptr, 0);
  if (n.has_properties && find_keyword(n, "properties", &props) && props.holds_document() &&
      codec::well_framed(props.container())) {
    bool any = false;
    for (codec::BsonElements child(props.container()); child.next();) {
      Value field;
      const Property* p = n.property(child.key);
      if (p && p->schema && has_field(v, p->name, &field) && !node_matches(*p->schema, field))
        any = true;
    }
    if (any) {
      EntryOut e(out);
      operator_name(e.get(), "properties");
      ArrayOut list(e.get(), "propertiesNotSatisfied");
      for (codec::BsonElements child(props.container()); child.next();) {
        Value field;
        const Property* p = n.property(child.key);
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
    // One item per pattern that some field fails, naming the first such field in the
    // document, as the server reports it.
    auto first_failing = [&](const PatternProperty& pp, codec::BsonElements* at) {
      for (codec::BsonElements f(v.data, v.size); f.next();) {
        if (pp.regex->matches(f.key) && !node_matches(*pp.schema, Value::of(f))) {
          *at = f;
          return true;
        }
      }
      return false;
    };
    bool any = false;
    codec::BsonElements field(v.data, v.size);
    for (const PatternProperty& pp : n.pattern_properties) any = any || first_failing(pp, &field);
    if (any) {
      EntryOut e(out);
      operator_name(e.get(), "patternProperties");
      ArrayOut list(e.get(), "details");
      for (const PatternProperty& pp : n.pattern_properties) {
        if (!first_failing(pp, &field)) continue;
        EntryOut item(list);
        utf8(item.get(), "propertyName", field.key);
        title_description(item.get(), *pp.schema);
        utf8(item.get(), "regexMatched", pp.regex->source());
        details_of(item.get(), *pp.schema, Value::of(field));
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
      // The server keeps `required` as a sorted set: the missing names come in byte order.
      std::vector<std::string_view> names;
      for (const std::string& name : n.required) {
        if (!has_field(v, name)) names.emplace_back(name);
      }
      std::sort(names.begin(), names.end());
      ArrayOut missing(e.get(), "missingProperties");
      for (std::string_view name : names) utf8(missing.get(), missing.next_key().c_str(), name);
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

}  // namespace docguard::schema
