// errInfo within the server's size bound: the details whole when they fit, else again without
// specifiedAs (the server's truncated error), else nothing (the server's "too large" note).
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

  json = within(*schema, R"({"a": -1})", 400, &size);
  EXPECT_EQ(size, DetailsSize::kTruncated);
  EXPECT_EQ(json.find("specifiedAs"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("consideredValue" : -1)"), std::string::npos) << json;

  const std::string long_value(1000, 'x');
  json = within(*schema, R"({"a": ")" + long_value + "\"}", 400, &size);
  EXPECT_EQ(size, DetailsSize::kTooLarge);
  EXPECT_EQ(json, "{ }");
}

}  // namespace
}  // namespace docguard::schema
