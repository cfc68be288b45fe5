// $jsonSchema on the server's semantics: each keyword judged, and the errInfo.details of a
// failing document compared, key for key and in order, with what the server writes (expected
// documents from the server's own error-generation tests and documentation).
#include "docguard/schema/json_schema.h"

#include <bson/bson.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "schema_test_json.h"

namespace docguard::schema {
namespace {

using schema_test::compile;
using schema_test::Json;
using schema_test::matches;

std::string to_json(const bson_t* b) {
  char* s = bson_as_relaxed_extended_json(b, nullptr);
  std::string out = s != nullptr ? s : "(invalid)";
  bson_free(s);
  return out;
}

std::string compile_error(const std::string& schema) {
  try {
    compile(schema);
  } catch (const JsonSchemaError& e) {
    EXPECT_EQ(e.error().kind, base::ErrorKind::kBadInput);
    EXPECT_EQ(e.error().subject, e.keyword_path());
    return e.what();
  }
  return "(compiled)";
}

// The details the server gives for `doc`, as relaxed extended JSON.
std::string explain(const std::string& schema, const std::string& doc) {
  Json d(doc);
  bson_t out = BSON_INITIALIZER;
  compile(schema)->explain(d.view(), &out, "details");
  bson_iter_t it, child;
  std::string json = "(none)";
  if (bson_iter_init_find(&it, &out, "details") && bson_iter_recurse(&it, &child)) {
    uint32_t len;
    const uint8_t* data;
    bson_iter_document(&it, &len, &data);
    bson_t inner;
    if (bson_init_static(&inner, data, len)) json = to_json(&inner);
  }
  bson_destroy(&out);
  return json;
}

std::string canonical(const std::string& json) {
  Json j(json);
  return to_json(j.b);
}

struct Case {
  const char* name;
  const char* schema;
  const char* document;
  bool matches;
};

// One row per keyword on the server's semantics.
const Case kCases[] = {
    // bsonType and its aliases
    {"bsonType int", R"({"properties": {"a": {"bsonType": "int"}}})", R"({"a": 1})", true},
    {"bsonType int refuses a double", R"({"properties": {"a": {"bsonType": "int"}}})",
     R"({"a": 1.0})", false},
    {"bsonType long refuses an int", R"({"properties": {"a": {"bsonType": "long"}}})",
     R"({"a": 1})", false},
    {"bsonType long", R"({"properties": {"a": {"bsonType": "long"}}})",
     R"({"a": {"$numberLong": "5"}})", true},
    {"bsonType number: int", R"({"properties": {"a": {"bsonType": "number"}}})", R"({"a": 1})",
     true},
    {"bsonType number: double", R"({"properties": {"a": {"bsonType": "number"}}})", R"({"a": 1.5})",
     true},
    {"bsonType number: decimal", R"({"properties": {"a": {"bsonType": "number"}}})",
     R"({"a": {"$numberDecimal": "1.5"}})", true},
    {"bsonType number refuses a string", R"({"properties": {"a": {"bsonType": "number"}}})",
     R"({"a": "1"})", false},
    {"bsonType list", R"({"properties": {"a": {"bsonType": ["string", "null"]}}})",
     R"({"a": null})", true},
    {"bsonType objectId", R"({"properties": {"a": {"bsonType": "objectId"}}})",
     R"({"a": {"$oid": "5f0000000000000000000000"}})", true},
    {"bsonType date", R"({"properties": {"a": {"bsonType": "date"}}})",
     R"({"a": {"$date": {"$numberLong": "0"}}})", true},
    {"bsonType bool", R"({"properties": {"a": {"bsonType": "bool"}}})", R"({"a": 0})", false},
    {"bsonType: no implicit array traversal", R"({"properties": {"a": {"bsonType": "string"}}})",
     R"({"a": ["x"]})", false},
    {"absent property passes", R"({"properties": {"a": {"bsonType": "string"}}})", R"({"b": 1})",
     true},
    // type (JSON Schema names)
    {"type number", R"({"properties": {"a": {"type": "number"}}})",
     R"({"a": {"$numberLong": "1"}})", true},
    {"type boolean", R"({"properties": {"a": {"type": "boolean"}}})", R"({"a": true})", true},
    {"type object refuses an array", R"({"properties": {"a": {"type": "object"}}})", R"({"a": []})",
     false},
    {"type list", R"({"properties": {"a": {"type": ["string", "number"]}}})", R"({"a": 2})", true},
    // required
    {"required present", R"({"required": ["a", "b"]})", R"({"a": 1, "b": null})", true},
    {"required missing", R"({"required": ["a", "b"]})", R"({"a": 1})", false},
    {"required on a nested document",
     R"({"properties": {"addr": {"bsonType": "object", "required": ["city"]}}})",
     R"({"addr": {"zip": "1"}})", false},
    {"required on a nested document, present",
     R"({"properties": {"addr": {"bsonType": "object", "required": ["city"]}}})",
     R"({"addr": {"city": "x"}})", true},
    // properties / patternProperties / additionalProperties
    {"additionalProperties false", R"({"properties": {"a": {}}, "additionalProperties": false})",
     R"({"a": 1, "b": 2})", false},
    {"additionalProperties false, only known",
     R"({"properties": {"a": {}}, "additionalProperties": false})", R"({"a": 1})", true},
    {"additionalProperties with patternProperties",
     R"({"patternProperties": {"^x_": {"bsonType": "int"}}, "additionalProperties": false})",
     R"({"x_1": 1, "x_2": 2})", true},
    {"patternProperties judges matching names",
     R"({"patternProperties": {"^x_": {"bsonType": "int"}}, "additionalProperties": false})",
     R"({"x_1": "no"})", false},
    {"additionalProperties schema",
     R"({"properties": {"a": {}}, "additionalProperties": {"bsonType": "string"}})",
     R"({"a": 1, "b": "s"})", true},
    {"additionalProperties schema fails",
     R"({"properties": {"a": {}}, "additionalProperties": {"bsonType": "string"}})",
     R"({"a": 1, "b": 2})", false},
    {"required-only name is additional", R"({"required": ["a"], "additionalProperties": false})",
     R"({"a": 1})", false},
    // enum
    {"enum", R"({"properties": {"a": {"enum": [1, "x", null]}}})", R"({"a": "x"})", true},
    {"enum numbers across types", R"({"properties": {"a": {"enum": [1]}}})", R"({"a": 1.0})", true},
    {"enum documents regardless of field order",
     R"({"properties": {"a": {"enum": [{"x": 1, "y": 2}]}}})", R"({"a": {"y": 2, "x": 1}})", true},
    {"enum miss", R"({"properties": {"a": {"enum": [1, 2]}}})", R"({"a": 3})", false},
    // numbers
    {"minimum", R"({"properties": {"a": {"minimum": 1}}})", R"({"a": 1})", true},
    {"minimum fails", R"({"properties": {"a": {"minimum": 1}}})", R"({"a": 0.5})", false},
    {"exclusiveMinimum", R"({"properties": {"a": {"minimum": 1, "exclusiveMinimum": true}}})",
     R"({"a": 1})", false},
    {"maximum", R"({"properties": {"a": {"maximum": 10}}})", R"({"a": {"$numberLong": "11"}})",
     false},
    {"exclusiveMaximum", R"({"properties": {"a": {"maximum": 10, "exclusiveMaximum": true}}})",
     R"({"a": 9.99})", true},
    {"minimum ignores strings", R"({"properties": {"a": {"minimum": 1}}})", R"({"a": "0"})", true},
    {"multipleOf", R"({"properties": {"a": {"multipleOf": 5}}})", R"({"a": 12})", false},
    // strings
    {"minLength counts code points", R"({"properties": {"a": {"minLength": 3}}})",
     R"({"a": "é€x"})", true},
    {"maxLength counts code points", R"({"properties": {"a": {"maxLength": 2}}})", R"({"a": "éé"})",
     true},
    {"maxLength fails", R"({"properties": {"a": {"maxLength": 2}}})", R"({"a": "abc"})", false},
    {"pattern", R"({"properties": {"sku": {"pattern": "^[A-Z]{3}-\\d+$"}}})",
     R"({"sku": "ABC-12"})", true},
    {"pattern fails", R"({"properties": {"sku": {"pattern": "^[A-Z]{3}-\\d+$"}}})",
     R"({"sku": "abc-12"})", false},
    {"pattern ignores non-strings", R"({"properties": {"sku": {"pattern": "^x"}}})",
     R"({"sku": 5})", true},
    // arrays
    {"items schema", R"({"properties": {"t": {"items": {"bsonType": "string"}}}})",
     R"({"t": ["a", "b"]})", true},
    {"items schema fails", R"({"properties": {"t": {"items": {"bsonType": "string"}}}})",
     R"({"t": ["a", 1]})", false},
    {"arrays of documents",
     R"({"properties": {"lines": {"items": {"bsonType": "object", "required": ["sku"], "properties": {"qty": {"bsonType": "int", "minimum": 1}}}}}})",
     R"({"lines": [{"sku": "a", "qty": 1}, {"sku": "b", "qty": 0}]})", false},
    {"items list",
     R"({"properties": {"p": {"items": [{"bsonType": "double"}, {"bsonType": "double"}]}}})",
     R"({"p": [1.5, 2.5, "extra"]})", true},
    {"items list, additionalItems false",
     R"({"properties": {"p": {"items": [{"bsonType": "double"}], "additionalItems": false}}})",
     R"({"p": [1.5, 2.5]})", false},
    {"additionalItems schema",
     R"({"properties": {"p": {"items": [{}], "additionalItems": {"bsonType": "int"}}}})",
     R"({"p": ["x", 1, 2]})", true},
    {"additionalItems without an items list is ignored",
     R"({"properties": {"p": {"items": {}, "additionalItems": false}}})", R"({"p": [1, 2]})", true},
    {"minItems", R"({"properties": {"t": {"minItems": 2}}})", R"({"t": [1]})", false},
    {"maxItems", R"({"properties": {"t": {"maxItems": 2}}})", R"({"t": [1, 2]})", true},
    {"uniqueItems", R"({"properties": {"t": {"uniqueItems": true}}})", R"({"t": [1, 2, 1.0]})",
     false},
    {"uniqueItems distinct", R"({"properties": {"t": {"uniqueItems": true}}})",
     R"({"t": [1, "1", [1]]})", true},
    // objects
    {"minProperties", R"({"minProperties": 3})", R"({"a": 1, "b": 2})", false},
    {"maxProperties", R"({"maxProperties": 3})", R"({"a": 1, "b": 2})", true},
    {"property dependency", R"({"dependencies": {"card": ["billing"]}})", R"({"card": 1})", false},
    {"property dependency met", R"({"dependencies": {"card": ["billing"]}})",
     R"({"card": 1, "billing": 2})", true},
    {"schema dependency", R"({"dependencies": {"card": {"required": ["billing"]}}})", R"({"x": 1})",
     true},
    // logic
    {"allOf", R"({"allOf": [{"required": ["a"]}, {"required": ["b"]}]})", R"({"a": 1})", false},
    {"anyOf", R"({"anyOf": [{"required": ["a"]}, {"required": ["b"]}]})", R"({"b": 1})", true},
    {"oneOf exactly one", R"({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]})",
     R"({"a": 1, "b": 2})", false},
    {"not", R"({"not": {"required": ["secret"]}})", R"({"secret": 1})", false},
    {"title and description only", R"({"title": "t", "description": "d"})", R"({"a": 1})", true},
    // the top level
    {"top-level type object", R"({"bsonType": "object"})", R"({"a": 1})", true},
    {"top-level type without object matches nothing", R"({"type": "number"})", R"({"a": 1})",
     false},
    {"top-level scalar keywords have no effect", R"({"minimum": 5, "minLength": 3})", R"({"a": 1})",
     true},
};

TEST(JsonSchemaTest, EachKeywordOnTheServersSemantics) {
  for (const Case& c : kCases) {
    EXPECT_EQ(matches(c.schema, c.document), c.matches) << c.name;
  }
}

TEST(JsonSchemaTest, RefusesWhatTheServerRefusesNamingTheKeyword) {
  EXPECT_EQ(compile_error(R"({"properties": {"a": {"format": "email"}}})"),
            "properties.a.format: $jsonSchema keyword 'format' is not supported by the server "
            "(nor by docguard)");
  EXPECT_NE(compile_error(R"({"$ref": "#/x"})").find("'$ref'"), std::string::npos);
  EXPECT_NE(compile_error(R"({"properties": {"n": {"type": "integer"}}})")
                .find("properties.n.type: $jsonSchema type 'integer' is not supported"),
            std::string::npos);
  EXPECT_NE(compile_error(R"({"properties": {"a": {"maxLenght": 3}}})")
                .find("unknown $jsonSchema keyword 'maxLenght'"),
            std::string::npos);
  EXPECT_NE(compile_error(R"({"type": "object", "bsonType": "object"})").find("both"),
            std::string::npos);
  EXPECT_NE(compile_error(R"({"bsonType": "integer"})").find("unknown type name 'integer'"),
            std::string::npos);
  EXPECT_NE(compile_error(R"({"required": []})").find("non-empty"), std::string::npos);
  EXPECT_NE(compile_error(R"({"required": ["a", "a"]})").find("duplicate"), std::string::npos);
  EXPECT_NE(compile_error(R"({"exclusiveMinimum": true})").find("'minimum' must be present"),
            std::string::npos);
  EXPECT_NE(compile_error(R"({"properties": {"a": {"pattern": "(("}}})")
                .find("properties.a.pattern: invalid regular expression"),
            std::string::npos);
  EXPECT_NE(compile_error(R"({"minItems": -1})").find("non-negative integer"), std::string::npos);
  EXPECT_NE(compile_error(R"({"minItems": 1.5})").find("non-negative integer"), std::string::npos);
  EXPECT_NE(compile_error(R"({"encrypt": {}})").find("not judged by docguard"), std::string::npos);
  EXPECT_NE(compile_error(R"({"enum": []})").find("non-empty array"), std::string::npos);
  EXPECT_NE(compile_error(R"({"allOf": {}})").find("allOf"), std::string::npos);
  EXPECT_NE(compile_error(R"({"title": 5})").find("must be a string"), std::string::npos);
  std::string deep = "{}";
  for (int i = 0; i < 40; ++i) deep = R"({"properties": {"a": )" + deep + "}}";
  EXPECT_NE(compile_error(deep).find("nested more than"), std::string::npos);
}

struct Explained {
  const char* name;
  const char* schema;
  const char* document;
  const char* details;
};

// Expected details as the server writes them.
const Explained
    kExplained
        [] =
            {
                {"properties/minimum with title and description",
                 R"({"properties": {"a": {"minimum": 1}}, "title": "example title", "description": "example description"})",
                 R"({"a": 0})",
                 R"({"operatorName": "$jsonSchema", "title": "example title", "description": "example description", "schemaRulesNotSatisfied": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "a", "details": [{"operatorName": "minimum", "specifiedAs": {"minimum": 1}, "reason": "comparison failed", "consideredValue": 0}]}]}]})"},
                {"bsonType with property title and description",
                 R"({"properties": {"a": {"bsonType": "int", "minimum": 1, "title": "property a", "description": "a >= 1"}}})",
                 R"({"a": 1.1})",
                 R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "a", "title": "property a", "description": "a >= 1", "details": [{"operatorName": "bsonType", "specifiedAs": {"bsonType": "int"}, "reason": "type did not match", "consideredValue": 1.1, "consideredType": "double"}]}]}]})"},
                {"type mismatch", R"({"properties": {"a": {"type": "string"}}})",
                 R"({"a": {"b": 1}})",
                 R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "a", "details": [{"operatorName": "type", "specifiedAs": {"type": "string"}, "reason": "type did not match", "consideredValue": {"b": 1}, "consideredType": "object"}]}]}]})"},
                {"required", R"({"required": ["a"], "properties": {"a": {"minimum": 1}}})", R"({})",
                 R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "required", "specifiedAs": {"required": ["a"]}, "missingProperties": ["a"]}]})"},
                {"missing properties in byte order, as the server's sorted set",
                 R"({"required": ["zeta", "alpha", "mid"]})", R"({"mid": 1})",
                 R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "required", "specifiedAs": {"required": ["zeta", "alpha", "mid"]}, "missingProperties": ["alpha", "zeta"]}]})"},
                {"maximum before minimum",
                 R"({"properties": {"a": {"properties": {"b": {"minimum": 10, "maximum": -10}}}}})", R"({"a": {"b": 5}})", R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "a", "details": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "b", "details": [{"operatorName": "maximum", "specifiedAs": {"maximum": -10}, "reason": "comparison failed", "consideredValue": 5}, {"operatorName": "minimum", "specifiedAs": {"minimum": 10}, "reason": "comparison failed", "consideredValue": 5}]}]}]}]}]})"},
                {"exclusiveMinimum",
                 R"({"properties": {"a": {"minimum": 1, "exclusiveMinimum": true}}})",
                 R"({"a": 1})",
                 R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "a", "details": [{"operatorName": "minimum", "specifiedAs": {"minimum": 1, "exclusiveMinimum": true}, "reason": "comparison failed", "consideredValue": 1}]}]}]})"},
                {"minLength", R"({"properties": {"a": {"type": "string", "minLength": 4}}})",
                 R"({"a": "foo"})",
                 R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "a", "details": [{"operatorName": "minLength", "specifiedAs": {"minLength": 4}, "reason": "specified string length was not satisfied", "consideredValue": "foo"}]}]}]})"},
                {"pattern", R"({"properties": {"a": {"pattern": "^S"}}})", R"({"a": "slow"})",
                 R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "a", "details": [{"operatorName": "pattern", "specifiedAs": {"pattern": "^S"}, "reason": "regular expression did not match", "consideredValue": "slow"}]}]}]})"},
                {"enum", R"({"properties": {"a": {"enum": [1, 2, 3]}}})", R"({"a": 0})",
                 R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "a", "details": [{"operatorName": "enum", "specifiedAs": {"enum": [1, 2, 3]}, "reason": "value was not found in enum", "consideredValue": 0}]}]}]})"},
                {"minItems", R"({"properties": {"a": {"type": "array", "minItems": 2}}})",
                 R"({"a": [1]})",
                 R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "a", "details": [{"operatorName": "minItems", "specifiedAs": {"minItems": 2}, "reason": "array did not match specified length", "consideredValue": [1], "numberOfItems": 1}]}]}]})"},
                {"uniqueItems", R"({"properties": {"a": {"uniqueItems": true}}})",
                 R"({"a": [1, 2, 3, 3, 4, 4]})", R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "a", "details": [{"operatorName": "uniqueItems", "specifiedAs": {"uniqueItems": true}, "reason": "found a duplicate item", "consideredValue": [1, 2, 3, 3, 4, 4], "duplicatedValue": 3}]}]}]})"},
                {"items schema",
                 R"({"properties": {"a": {"items": {"type": "string", "description": "elements must be of string type"}}}})",
                 R"({"a": [1, "A", {}]})",
                 R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "a", "details": [{"operatorName": "items", "description": "elements must be of string type", "reason": "At least one item did not match the sub-schema", "itemIndex": 0, "details": [{"operatorName": "type", "specifiedAs": {"type": "string"}, "reason": "type did not match", "consideredValue": 1, "consideredType": "int"}]}]}]}]})"},
                {"items list and additionalItems schema",
                 R"({"properties": {"a": {"type": "array", "items": [{"type": "number"}, {"type": "string"}], "additionalItems": {"type": "object"}}}})", R"({"a": ["1", 2, {}, {"b": 1}, "Fail"]})", R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "a", "details": [{"operatorName": "items", "details": [{"itemIndex": 0, "details": [{"operatorName": "type", "specifiedAs": {"type": "number"}, "reason": "type did not match", "consideredValue": "1", "consideredType": "string"}]}, {"itemIndex": 1, "details": [{"operatorName": "type", "specifiedAs": {"type": "string"}, "reason": "type did not match", "consideredValue": 2, "consideredType": "int"}]}]}, {"operatorName": "additionalItems", "reason": "At least one additional item did not match the sub-schema", "itemIndex": 4, "details": [{"operatorName": "type", "specifiedAs": {"type": "object"}, "reason": "type did not match", "consideredValue": "Fail", "consideredType": "string"}]}]}]}]})"},
                {"additionalItems false",
                 R"({"properties": {"a": {"items": [{"type": "number"}, {"type": "string"}], "additionalItems": false}}})",
                 R"({"a": [1, "First", "Extra element"]})",
                 R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "a", "details": [{"operatorName": "additionalItems", "specifiedAs": {"additionalItems": false}, "reason": "found additional items", "additionalItems": ["Extra element"]}]}]}]})"},
                {"minProperties", R"({"minProperties": 10})",
                 R"({"_id": 1, "a": 1, "b": 2, "c": 3})",
                 R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "minProperties", "specifiedAs": {"minProperties": 10}, "reason": "specified number of properties was not satisfied", "numberOfProperties": 4}]})"},
                {"property dependencies",
                 R"({"dependencies": {"a": ["b", "c", "d"], "b": ["c", "d"], "e": ["c", "d"]}})",
                 R"({"a": 1, "b": 2, "e": 3})",
                 R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "dependencies", "failingDependencies": [{"conditionalProperty": "a", "missingProperties": ["c", "d"]}, {"conditionalProperty": "b", "missingProperties": ["c", "d"]}, {"conditionalProperty": "e", "missingProperties": ["c", "d"]}]}]})"},
                {"schema dependency",
                 R"({"dependencies": {"a": {"properties": {"b": {"type": "number"}}}}})",
                 R"({"a": 1, "b": "foo"})",
                 R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "dependencies", "failingDependencies": [{"conditionalProperty": "a", "details": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "b", "details": [{"operatorName": "type", "specifiedAs": {"type": "number"}, "reason": "type did not match", "consideredValue": "foo", "consideredType": "string"}]}]}]}]}]})"},
                {"additionalProperties false before required",
                 R"({"required": ["a"], "properties": {"b": {"type": "number"}}, "additionalProperties": false})",
                 R"({"_id": 0, "b": 2})",
                 R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "additionalProperties", "specifiedAs": {"additionalProperties": false}, "additionalProperties": ["_id"]}, {"operatorName": "required", "specifiedAs": {"required": ["a"]}, "missingProperties": ["a"]}]})"},
                {"properties before additionalProperties", R"({"additionalProperties": false, "properties": {"_id": {}, "a": {"type": "object", "additionalProperties": false}}})", R"({"_id": 1, "a": {"b": 1}, "c": 1})", R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "a", "details": [{"operatorName": "additionalProperties", "specifiedAs": {"additionalProperties": false}, "additionalProperties": ["b"]}]}]}, {"operatorName": "additionalProperties", "specifiedAs": {"additionalProperties": false}, "additionalProperties": ["c"]}]})"},
                {"additionalProperties schema and patternProperties", R"({"patternProperties": {"^S": {"type": "number", "title": "properties starting with S", "description": "property should be of integer type"}}, "additionalProperties": {"type": "string", "title": "additional properties", "description": "additional properties are strings"}})", R"({"Super": 1, "Slow": "oh no a string", "b": 1})", R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "additionalProperties", "title": "additional properties", "description": "additional properties are strings", "reason": "at least one additional property did not match the subschema", "failingProperty": "b", "details": [{"operatorName": "type", "specifiedAs": {"type": "string"}, "reason": "type did not match", "consideredValue": 1, "consideredType": "int"}]}, {"operatorName": "patternProperties", "details": [{"propertyName": "Slow", "title": "properties starting with S", "description": "property should be of integer type", "regexMatched": "^S", "details": [{"operatorName": "type", "specifiedAs": {"type": "number"}, "reason": "type did not match", "consideredValue": "oh no a string", "consideredType": "string"}]}]}]})"},
                {"allOf",
                 R"({"allOf": [{"properties": {"a": {"minimum": 1}}}, {"properties": {"b": {"minimum": 2}}}]})",
                 R"({"a": 1, "b": 0})",
                 R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "allOf", "schemasNotSatisfied": [{"index": 1, "details": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "b", "details": [{"operatorName": "minimum", "specifiedAs": {"minimum": 2}, "reason": "comparison failed", "consideredValue": 0}]}]}]}]}]})"},
                {"anyOf with descriptions",
                 R"({"properties": {"a": {"description": "property a", "anyOf": [{"bsonType": "number", "description": "number?"}, {"bsonType": "string"}]}}})", R"({"a": {}})", R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "a", "description": "property a", "details": [{"operatorName": "anyOf", "schemasNotSatisfied": [{"index": 0, "description": "number?", "details": [{"operatorName": "bsonType", "specifiedAs": {"bsonType": "number"}, "reason": "type did not match", "consideredValue": {}, "consideredType": "object"}]}, {"index": 1, "details": [{"operatorName": "bsonType", "specifiedAs": {"bsonType": "string"}, "reason": "type did not match", "consideredValue": {}, "consideredType": "object"}]}]}]}]}]})"},
                {"oneOf more than one",
                 R"({"properties": {"a": {"oneOf": [{"minimum": 1}, {"maximum": 3}], "description": "oneOf description"}}})",
                 R"({"a": 2})",
                 R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "a", "description": "oneOf description", "details": [{"operatorName": "oneOf", "reason": "more than one subschema matched", "matchingSchemaIndexes": [0, 1]}]}]}]})"},
                {"not", R"({"not": {"properties": {"a": {"minimum": 3}}}})", R"({"a": 6})",
                 R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "not", "reason": "child expression matched"}]})"},
                {"top-level type without object", R"({"type": "number"})", R"({"a": 1})",
                 R"({"operatorName": "$jsonSchema", "specifiedAs": {"$jsonSchema": {"type": "number"}}, "reason": "expression always evaluates to false"})"},
};

TEST(JsonSchemaTest, ExplainsAFailureAsTheServerDoes) {
  for (const Explained& c : kExplained) {
    EXPECT_FALSE(matches(c.schema, c.document)) << c.name;
    EXPECT_EQ(explain(c.schema, c.document), canonical(c.details)) << c.name;
  }
}

UpdateJudgement judge(const std::string& schema, const std::string& update,
                      std::string* details = nullptr, bool upsert = false) {
  Json u(update);
  bson_t out = BSON_INITIALIZER;
  const UpdateJudgement r = compile(schema)->judge_update(u.view(), upsert, &out);
  if (details != nullptr) {
    bson_iter_t it;
    *details = "(none)";
    if (bson_iter_init_find(&it, &out, "details")) {
      uint32_t len;
      const uint8_t* data;
      bson_iter_document(&it, &len, &data);
      bson_t inner;
      if (bson_init_static(&inner, data, len)) *details = to_json(&inner);
    }
  }
  bson_destroy(&out);
  return r;
}

constexpr const char* kShop =
    R"({"bsonType": "object", "required": ["name", "price"], "properties": {"name": {"bsonType": "string"}, "price": {"bsonType": "number", "minimum": 0}, "tags": {"bsonType": "array", "maxItems": 3}, "dims": {"bsonType": "object", "required": ["w"], "properties": {"w": {"bsonType": "int"}}}, "note": {}}})";

TEST(JsonSchemaTest, JudgesAnUpdateOnWhatItChanges) {
  std::string details;
  EXPECT_EQ(judge(kShop, R"({"$set": {"price": 5}})"), UpdateJudgement::kPass);
  EXPECT_EQ(judge(kShop, R"({"$set": {"price": "5"}})", &details), UpdateJudgement::kFail);
  EXPECT_EQ(
      details,
      canonical(
          R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "price", "details": [{"operatorName": "bsonType", "specifiedAs": {"bsonType": "number"}, "reason": "type did not match", "consideredValue": "5", "consideredType": "string"}]}]}]})"));
  EXPECT_EQ(judge(kShop, R"({"$set": {"dims.w": 1.5}})", &details), UpdateJudgement::kFail);
  EXPECT_NE(details.find(R"("propertyName" : "dims")"), std::string::npos) << details;
  EXPECT_EQ(judge(kShop, R"({"$unset": {"price": ""}})", &details), UpdateJudgement::kFail);
  EXPECT_EQ(
      details,
      canonical(
          R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "required", "specifiedAs": {"required": ["name", "price"]}, "missingProperties": ["price"]}]})"));
  // dims is optional: where a stored document has none, the $unset changes nothing.
  EXPECT_EQ(judge(kShop, R"({"$unset": {"dims.w": ""}})"), UpdateJudgement::kUnjudged);
  EXPECT_EQ(judge(kShop, R"({"$unset": {"note": ""}})"), UpdateJudgement::kPass);
  EXPECT_EQ(judge(kShop, R"({"$rename": {"name": "title"}})"), UpdateJudgement::kFail);
  // Several failing paths: one entry per keyword, as the server's for the whole post-image.
  EXPECT_EQ(
      judge(kShop, R"({"$set": {"price": "5", "name": 1}, "$unset": {"name": "", "price": ""}})",
            &details),
      UpdateJudgement::kFail);
  EXPECT_EQ(
      details,
      canonical(
          R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "price", "details": [{"operatorName": "bsonType", "specifiedAs": {"bsonType": "number"}, "reason": "type did not match", "consideredValue": "5", "consideredType": "string"}]}, {"propertyName": "name", "details": [{"operatorName": "bsonType", "specifiedAs": {"bsonType": "string"}, "reason": "type did not match", "consideredValue": 1, "consideredType": "int"}]}]}, {"operatorName": "required", "specifiedAs": {"required": ["name", "price"]}, "missingProperties": ["name", "price"]}]})"));
  // What depends on the stored document is not guessed.
  EXPECT_EQ(judge(kShop, R"({"$push": {"tags": "x"}})"), UpdateJudgement::kUnjudged);
  EXPECT_EQ(judge(kShop, R"({"$inc": {"price": 1}})"), UpdateJudgement::kUnjudged);
  EXPECT_EQ(judge(kShop, R"({"$set": {"tags.0": 1}})"), UpdateJudgement::kUnjudged);
  // ... unless nothing in the schema constrains the path.
  EXPECT_EQ(judge(kShop, R"({"$inc": {"note": 1}})"), UpdateJudgement::kPass);
  EXPECT_EQ(judge(kShop, R"({"$push": {"other": 1}})"), UpdateJudgement::kPass);
  // additionalProperties: false refuses a new field.
  EXPECT_EQ(
      judge(R"({"properties": {"a": {}}, "additionalProperties": false})", R"({"$set": {"b": 1}})"),
      UpdateJudgement::kFail);
  // Keywords over the whole object cannot be judged from one path.
  EXPECT_EQ(judge(R"({"maxProperties": 3})", R"({"$set": {"b": 1}})"), UpdateJudgement::kUnjudged);
  EXPECT_EQ(judge(R"({"anyOf": [{"required": ["a"]}]})", R"({"$unset": {"a": ""}})"),
            UpdateJudgement::kUnjudged);
}

// The server appends a list position (items: [schemas]) as a long, and the object form's index
// (items: {schema}, additionalItems) as an int.
TEST(JsonSchemaTest, ItemIndexHasTheServersType) {
  auto explained_canonically = [](const std::string& schema) {
    Json d(R"({"a": [1, "x"]})");
    bson_t out = BSON_INITIALIZER;
    compile(schema)->explain(d.view(), &out, "details");
    char* json = bson_as_canonical_extended_json(&out, nullptr);
    std::string text = json;
    bson_free(json);
    bson_destroy(&out);
    return text;
  };
  const std::string list =
      explained_canonically(R"({"properties": {"a": {"items": [{}, {"bsonType": "int"}]}}})");
  EXPECT_NE(list.find(R"("itemIndex" : { "$numberLong" : "1" })"), std::string::npos) << list;
  const std::string each =
      explained_canonically(R"({"properties": {"a": {"items": {"bsonType": "int"}}}})");
  EXPECT_NE(each.find(R"("itemIndex" : { "$numberInt" : "1" })"), std::string::npos) << each;
}

// An update is refused only when every document it could apply to would fail; what depends on
// the stored document passes as unjudged.
TEST(JsonSchemaTest, AnUpdateFailsOnlyWhenEveryStoredDocumentWould) {
  // $setOnInsert applies only to an insert: without upsert it changes nothing; with upsert a
  // matched document never sees it.
  EXPECT_EQ(judge(kShop, R"({"$setOnInsert": {"price": "5"}})"), UpdateJudgement::kPass);
  EXPECT_EQ(judge(kShop, R"({"$setOnInsert": {"price": "5"}})", nullptr, true),
            UpdateJudgement::kUnjudged);
  EXPECT_EQ(judge(kShop, R"({"$setOnInsert": {"price": 5}})", nullptr, true),
            UpdateJudgement::kPass);
  // A failing $setOnInsert adds nothing to the details of a failing $set.
  std::string details;
  EXPECT_EQ(
      judge(kShop, R"({"$set": {"name": 1}, "$setOnInsert": {"price": "5"}})", &details, true),
      UpdateJudgement::kFail);
  EXPECT_EQ(details.find("price"), std::string::npos) << details;
  // A required object, typed as one, is in every valid stored document: removing its required
  // field fails for certain.
  constexpr const char* kRequiredDims =
      R"({"required": ["dims"], "properties": {"dims": {"bsonType": "object", "required": ["w"], "properties": {"w": {"bsonType": "int"}}}}})";
  EXPECT_EQ(judge(kRequiredDims, R"({"$unset": {"dims.w": ""}})"), UpdateJudgement::kFail);
  EXPECT_EQ(judge(kRequiredDims, R"({"$rename": {"dims.w": "dims.v"}})"), UpdateJudgement::kFail);
  // Required but not typed: a stored non-object dims has no w to remove and stays valid.
  EXPECT_EQ(judge(R"({"required": ["dims"], "properties": {"dims": {"required": ["w"]}}})",
                  R"({"$unset": {"dims.w": ""}})"),
            UpdateJudgement::kUnjudged);
  // A $set under an optional parent may create it: {dims: {h: 1}} would miss w.
  EXPECT_EQ(
      judge(
          R"({"properties": {"dims": {"bsonType": "object", "required": ["w"], "properties": {"h": {"bsonType": "int"}}}}})",
          R"({"$set": {"dims.h": 1}})"),
      UpdateJudgement::kUnjudged);
  // ... and one that creates exactly what the parent requires passes.
  EXPECT_EQ(
      judge(
          R"({"properties": {"dims": {"bsonType": "object", "required": ["w"], "properties": {"w": {"bsonType": "int"}}}}})",
          R"({"$set": {"dims.w": 1}})"),
      UpdateJudgement::kPass);
  // A value that fails its own schema fails wherever it lands.
  EXPECT_EQ(
      judge(
          R"({"properties": {"dims": {"bsonType": "object", "required": ["w"], "properties": {"h": {"bsonType": "int"}}}}})",
          R"({"$set": {"dims.h": "x"}})"),
      UpdateJudgement::kFail);
}

TEST(JsonSchemaTest, BadDocumentsNeverCrash) {
  auto s = compile(kShop);
  const uint8_t junk[] = {12, 0, 0, 0, 3, 'a', 0, 200, 0, 0, 0, 0};
  (void)s->matches({junk, sizeof junk});
  bson_t out = BSON_INITIALIZER;
  s->explain({junk, sizeof junk}, &out, "details");
  (void)s->judge_update({junk, sizeof junk}, false, &out);
  bson_destroy(&out);
}

}  // namespace
}  // namespace docguard::schema
