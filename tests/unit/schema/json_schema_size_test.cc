// errInfo within the server's size bound: the details whole when they fit, else again without
// specifiedAs and consideredValue(s) (the server's truncated error), else nothing (the server's
// "too large" note).
#include <bson/bson.h>
#include <gtest/gtest.h>

#include <string>

#include "docguard/schema/json_schema.h"
#include "schema_test_json.h"

namespace docguard::schema {
namespace {

using schema_test::Json;

std::string within(const JsonSchema& schema, const std::string& doc, size_t limit,
                   DetailsSize* size) {
  Json d(doc);
  bson_t out = BSON_INITIALIZER;
  *size = schema.explain_within(d.view(), limit, &out, "details");
  char* s = bson_as_relaxed_extended_json(&out, nullptr);
  std::string json = s;
  bson_free(s);
  bson_destroy(&out);
  return json;
}

TEST(JsonSchemaSize, DetailsShrinkAsTheServersDo) {
  // A long enum makes specifiedAs large; the considered value stays small.
  std::string values;
  for (int i = 0; i < 200; ++i) values += (i ? ", " : "") + std::to_string(i);
  Json schema_json(R"({"properties": {"a": {"enum": [)" + values + "]}}}");
  const auto schema = JsonSchema::compile(schema_json.view());
  DetailsSize size;
  std::string json = within(*schema, R"({"a": -1})", kMaxValidationErrorBytes, &size);
  EXPECT_EQ(size, DetailsSize::kFull);
  EXPECT_NE(json.find("specifiedAs"), std::string::npos);

  // The truncated error: without specifiedAs and without the considered values.
  json = within(*schema, R"({"a": -1})", 400, &size);
  EXPECT_EQ(size, DetailsSize::kTruncated);
  EXPECT_EQ(json.find("specifiedAs"), std::string::npos) << json;
  EXPECT_EQ(json.find("consideredValue"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("propertyName" : "a")"), std::string::npos) << json;

  // A considered value past the bound: the truncated error still says which keyword failed.
  const std::string long_value(1000, 'x');
  json = within(*schema, R"({"a": ")" + long_value + "\"}", 400, &size);
  EXPECT_EQ(size, DetailsSize::kTruncated);
  EXPECT_EQ(json.find("xxxx"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("operatorName" : "enum")"), std::string::npos) << json;

  // What is not a value (a property name) past the bound even then: nothing.
  const std::string long_name(1000, 'n');
  Json named(R"({"properties": {")" + long_name + R"(": {"enum": [1]}}})");
  json = within(*JsonSchema::compile(named.view()), "{\"" + long_name + "\": 2}", 400, &size);
  EXPECT_EQ(size, DetailsSize::kTooLarge);
  EXPECT_EQ(json, "{ }");
}

TEST(JsonSchemaSize, ValuesCopiedStopAtTheBound) {
  // Twenty levels failing, each reporting its whole subtree as its consideredValue: the first
  // attempt stops copying at the bound, and the truncated one copies no value at all.
  std::string schema = R"({"bsonType": "string"})";
  std::string doc = "\"" + std::string(100000, 'v') + "\"";
  for (int i = 0; i < 20; ++i) {
    schema = R"({"bsonType": "object", "enum": [1], "properties": {"a": )" + schema + "}}";
    doc = R"({"a": )" + doc + "}";
  }
  Json schema_json(schema);
  DetailsSize size;
  const std::string json =
      within(*JsonSchema::compile(schema_json.view()), doc, size_t{512} * 1024, &size);
  EXPECT_EQ(size, DetailsSize::kTruncated);
  EXPECT_EQ(json.find("vvvv"), std::string::npos);
  EXPECT_LT(json.size(), 64u * 1024);
}

}  // namespace
}  // namespace docguard::schema
