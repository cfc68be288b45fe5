// The checks of one $jsonSchema keyword's value, as the server makes them when a validator is
// set (schema_keywords.h).
#include "schema_keywords.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include "docguard/schema/json_schema.h"

namespace docguard::schema {
namespace {

constexpr std::array<std::string_view, 29> kKeywords = {"additionalItems",
                                                        "additionalProperties",
                                                        "allOf",
                                                        "anyOf",
                                                        "bsonType",
                                                        "dependencies",
                                                        "description",
                                                        "enum",
                                                        "exclusiveMaximum",
                                                        "exclusiveMinimum",
                                                        "items",
                                                        "maxItems",
                                                        "maxLength",
                                                        "maxProperties",
                                                        "maximum",
                                                        "minItems",
                                                        "minLength",
                                                        "minProperties",
                                                        "minimum",
                                                        "multipleOf",
                                                        "not",
                                                        "oneOf",
                                                        "pattern",
                                                        "patternProperties",
                                                        "properties",
                                                        "required",
                                                        "title",
                                                        "type",
                                                        "uniqueItems"};
// Draft-4 keywords the server does not support; it refuses them, and so does docguard.
constexpr std::array<std::string_view, 6> kServerUnsupported = {"$ref",        "$schema", "default",
                                                                "definitions", "format",  "id"};

}  // namespace

void fail(const std::string& path, const std::string& what) { throw JsonSchemaError(path, what); }

void check_keyword(std::string_view key, const std::string& here) {
  if (std::find(kServerUnsupported.begin(), kServerUnsupported.end(), key) !=
      kServerUnsupported.end()) {
    fail(here, "$jsonSchema keyword '" + std::string(key) +
                   "' is not supported by the server (nor by docguard)");
  }
  if (key == "encrypt" || key == "encryptMetadata") {
    fail(here, "$jsonSchema keyword '" + std::string(key) +
                   "' (client-side field level encryption) is not judged by docguard");
  }
  if (std::find(kKeywords.begin(), kKeywords.end(), key) == kKeywords.end()) {
    fail(here, "unknown $jsonSchema keyword '" + std::string(key) + "'");
  }
}

std::string_view string_value(const Value& v, const std::string& path) {
  if (!v.is_string()) fail(path, "must be a string");
  return v.utf8();
}
bool bool_value(const Value& v, const std::string& path) {
  if (v.type != BSON_TYPE_BOOL) fail(path, "must be a boolean");
  return v.data[0] != 0;
}
Number number_value(const Value& v, const std::string& path) {
  auto n = decode_number(v);
  if (!n) fail(path, "must be a number");
  return *n;
}
uint64_t count_value(const Value& v, const std::string& path) {
  auto n = number_of(v);
  if (!n || !(*n >= 0) || *n != std::floor(*n) || *n > 9.2e18) {
    fail(path, "must be a non-negative integer");
  }
  return static_cast<uint64_t>(*n);
}

void compile_types(const Value& v, const std::string& path, bool bson, Node* node) {
  node->has_type = true;
  node->type_is_bson = bson;
  auto one = [&](std::string_view alias) {
    if (!bson && alias == "integer") {
      fail(path,
           "$jsonSchema type 'integer' is not supported by the server (use bsonType "
           "'int' or 'long')");
    }
    auto mask = bson ? bson_type_alias(alias) : json_type_alias(alias);
    if (!mask) fail(path, "unknown type name '" + std::string(alias) + "'");
    node->types |= *mask;
  };
  if (v.is_string()) {
    one(v.utf8());
    node->single_type = true;
  } else if (v.is_array()) {
    std::set<std::string_view> names;
    for (codec::BsonElements e(v.data, v.size); e.next();) {
      if (e.type != BSON_TYPE_UTF8) fail(path, "array elements must be strings");
      if (!names.insert(e.utf8()).second) {
        fail(path, "has duplicate value: " + std::string(e.utf8()));
      }
      one(e.utf8());
    }
    if (names.empty()) fail(path, "must name at least one type");
    node->single_type = names.size() == 1;
  } else {
    fail(path, "must be either a string or an array of strings");
  }
}

Property* property_slot(Node* node, std::string_view name) {
  for (auto& p : node->properties) {
    if (p.name == name) return &p;
  }
  auto& p = node->properties.emplace_back();
  p.name = std::string(name);
  p.dotted = name.find('.') != std::string_view::npos;
  node->has_dotted_properties = node->has_dotted_properties || p.dotted;
  return &p;
}

void compile_required(const Value& v, const std::string& path, Node* node) {
  if (!v.is_array()) fail(path, "must be an array of strings");
  std::set<std::string_view> names;
  for (codec::BsonElements e(v.data, v.size); e.next();) {
    if (e.type != BSON_TYPE_UTF8) fail(path, "array elements must be strings");
    if (!names.insert(e.utf8()).second) {
      fail(path, "array must not contain duplicate values: " + std::string(e.utf8()));
    }
    Property* p = property_slot(node, e.utf8());
    p->required_index = static_cast<int32_t>(node->required.size());
    node->required.emplace_back(e.utf8());
  }
  if (names.empty()) fail(path, "must be a non-empty array");
}

}  // namespace docguard::schema
