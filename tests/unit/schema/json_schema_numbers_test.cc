// Numbers as the server judges them: multipleOf's Decimal128 remainder, exact comparisons
// across int, long, double and decimal, uniqueItems over long arrays and its duplicatedValue.
// (The corpus holds the row-by-row cases; these are the ones a row cannot say.)
#include <bson/bson.h>
#include <gtest/gtest.h>

#include <string>

#include "docguard/schema/json_schema.h"
#include "schema_test_json.h"

namespace docguard::schema {
namespace {

using schema_test::compile;
using schema_test::Json;
using schema_test::matches;

std::string details(const std::string& schema, const std::string& doc) {
  Json d(doc);
  bson_t out = BSON_INITIALIZER;
  compile(schema)->explain(d.view(), &out, "details");
  char* s = bson_as_relaxed_extended_json(&out, nullptr);
  std::string json = s;
  bson_free(s);
  bson_destroy(&out);
  return json;
}

std::string integers(int from, int count, const std::string& last = "") {
  std::string out = "[";
  for (int i = 0; i < count; ++i) out += (i ? ", " : "") + std::to_string(from + i);
  return out + last + "]";
}

TEST(JsonSchemaNumbers, PricesInCentsAreMultiplesAsOnTheServer) {
  const std::string cents =
      R"({"properties": {"price": {"bsonType": "double", "multipleOf": 0.01}}})";
  EXPECT_TRUE(matches(cents, R"({"price": 19.99})"));
  EXPECT_TRUE(matches(cents, R"({"price": 0.07})"));
  EXPECT_FALSE(matches(cents, R"({"price": 19.995})"));
  EXPECT_TRUE(matches(R"({"properties": {"r": {"multipleOf": 0.1}}})", R"({"r": 0.3})"));
  EXPECT_NE(details(cents, R"({"price": 19.995})").find("is not a multiple of"), std::string::npos);
}

TEST(JsonSchemaNumbers, MultipleOfRefusesWhatTheServerRefuses) {
  for (const char* divisor :
       {"0", "-1", R"({"$numberDouble": "NaN"})", R"({"$numberDouble": "Infinity"})",
        R"({"$numberDecimal": "-0"})", R"("5")"}) {
    EXPECT_THROW(compile(std::string(R"({"properties": {"a": {"multipleOf": )") + divisor + "}}}"),
                 JsonSchemaError)
        << divisor;
  }
  // NaN is a number: the server takes it as a bound (only NaN then satisfies minimum).
  const std::string nan_bound = R"({"properties": {"a": {"minimum": {"$numberDouble": "NaN"}}}})";
  EXPECT_TRUE(matches(nan_bound, R"({"a": {"$numberDouble": "NaN"}})"));
  EXPECT_FALSE(matches(nan_bound, R"({"a": 1})"));
}

TEST(JsonSchemaNumbers, UniqueItemsOverLongArraysFindsTheServersDuplicate) {
  const std::string unique = R"({"properties": {"t": {"uniqueItems": true}}})";
  EXPECT_TRUE(matches(unique, "{\"t\": " + integers(0, 16000) + "}"));
  EXPECT_FALSE(matches(unique, "{\"t\": " + integers(0, 16000, ", 15999.0") + "}"));
  // Distinct longs above 2^53 stay distinct; the same value as a decimal does not.
  std::string longs = "[";
  for (int i = 0; i < 100; ++i) {
    longs += (i ? ", " : "") + std::string(R"({"$numberLong": ")") +
             std::to_string(9007199254740992LL + i) + "\"}";
  }
  EXPECT_TRUE(matches(unique, "{\"t\": " + longs + "]}"));
  EXPECT_FALSE(
      matches(unique, "{\"t\": " + longs + R"(, {"$numberDecimal": "9007199254741001"}]})"));
  // duplicatedValue is the first element equal to an earlier one (the server's set insertion).
  EXPECT_NE(details(unique, R"({"t": [1, 2, 2, 1]})").find(R"("duplicatedValue" : 2)"),
            std::string::npos);
  const std::string many =
      "{\"t\": " + integers(0, 40, ", {\"b\": 1, \"a\": 1}, 39, {\"a\": 1, \"b\": 1}") + "}";
  EXPECT_NE(details(unique, many).find(R"("duplicatedValue" : 39)"), std::string::npos);
  EXPECT_FALSE(matches(unique, R"({"t": [{"a": 1, "b": [1, 2]}, {"b": [1.0, 2], "a": 1}]})"));
  EXPECT_TRUE(matches(unique, R"({"t": [{"a": 1, "b": [1, 2]}, {"b": [2, 1], "a": 1}]})"));
}

}  // namespace
}  // namespace docguard::schema
