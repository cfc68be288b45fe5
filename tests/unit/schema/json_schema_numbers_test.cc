// Numbers as the server judges them: multipleOf's Decimal128 remainder, exact comparisons
// across int, long, double and decimal, uniqueItems over long arrays and its duplicatedValue.
// (The corpus holds the row-by-row cases; these are the ones a row cannot say.)
#include <bson/bson.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
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

// The server compares a Symbol and a String by their text (one canonical type): in enum and in
// uniqueItems, both ways.
TEST(JsonSchemaNumbers, ASymbolEqualsTheStringOfItsText) {
  EXPECT_TRUE(
      matches(R"({"properties": {"s": {"enum": ["red"]}}})", R"({"s": {"$symbol": "red"}})"));
  EXPECT_TRUE(
      matches(R"({"properties": {"s": {"enum": [{"$symbol": "red"}]}}})", R"({"s": "red"})"));
  EXPECT_FALSE(
      matches(R"({"properties": {"s": {"enum": ["red"]}}})", R"({"s": {"$symbol": "blue"}})"));
  const std::string unique = R"({"properties": {"t": {"uniqueItems": true}}})";
  EXPECT_FALSE(matches(unique, R"({"t": ["red", {"$symbol": "red"}]})"));
  EXPECT_TRUE(matches(unique, R"({"t": ["red", {"$symbol": "blue"}]})"));
  std::string long_one = integers(0, 40);
  long_one.pop_back();
  EXPECT_FALSE(matches(unique, "{\"t\": " + long_one + R"(, "red", {"$symbol": "red"}]})"));
}

// A BSON document of one element {key: value} (type `type`), as bytes.
std::string one_element(char type, const std::string& key, const std::string& value) {
  std::string body(1, type);
  body += key;
  body += '\0';
  body += value;
  body += '\0';
  const auto size = static_cast<uint32_t>(body.size() + 4);
  return std::string(reinterpret_cast<const char*>(&size), 4) + body;
}

// Values nested 150 levels, as a server stores them (it allows 180): 1 and 1.0 are still equal.
// (Built as bytes: libbson's JSON reader stops at 100 levels.)
TEST(JsonSchemaNumbers, DeepValuesCompareByMeaning) {
  const int32_t int_one = 1;
  const double double_one = 1.0;
  std::string one = one_element(0x10, "0", std::string(reinterpret_cast<const char*>(&int_one), 4));
  std::string other =
      one_element(0x01, "0", std::string(reinterpret_cast<const char*>(&double_one), 8));
  for (int i = 0; i < 150; ++i) {
    one = one_element(0x04, "0", one);
    other = one_element(0x04, "0", other);
  }
  // {t: [one, other]}
  std::string items(1, 0x04);
  items += "0";
  items += '\0';
  items += one;
  items += std::string(1, 0x04) + "1" + '\0' + other;
  items += '\0';
  const auto items_size = static_cast<uint32_t>(items.size() + 4);
  const std::string array = std::string(reinterpret_cast<const char*>(&items_size), 4) + items;
  const std::string doc = one_element(0x04, "t", array);
  const auto unique = compile(R"({"properties": {"t": {"uniqueItems": true}}})");
  EXPECT_FALSE(unique->matches(
      {reinterpret_cast<const uint8_t*>(doc.data()), static_cast<uint32_t>(doc.size())}));
}

// The integer hash uniqueItems sorts by first (a splitmix64 finalizer of the value), and its
// inverse: what an attacker who reads the source can compute.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}
uint64_t inverse(uint64_t m) {  // m * inverse(m) == 1 modulo 2^64 (Newton's iteration)
  uint64_t x = m;
  for (int i = 0; i < 5; ++i) x *= 2 - m * x;
  return x;
}
uint64_t unmix(uint64_t x) {
  x ^= (x >> 31) ^ (x >> 62);
  x *= inverse(0x94D049BB133111EBULL);
  x ^= (x >> 27) ^ (x >> 54);
  x *= inverse(0xBF58476D1CE4E5B9ULL);
  x ^= (x >> 30) ^ (x >> 60);
  return x - 0x9E3779B97F4A7C15ULL;
}
uint64_t integer_hash(int64_t n) { return mix(static_cast<uint64_t>(n) ^ 1); }

// Items built to share the hash: pairs [x, y] of an array's hash h*P^2 + hash(x)*P + hash(y),
// with y solved so that hash(x)*P + hash(y) is the same for every x. Sorting by value, as the
// server's ordered set does, makes them cost O(n log n); a hash bucket compared pairwise would
// take hours of a worker.
TEST(JsonSchemaNumbers, UniqueItemsBuiltToShareAHashAreJudgedInLinearithmicTime) {
  constexpr uint64_t kPrime = 0x100000001B3ULL;
  constexpr int kItems = 500000;
  const uint64_t target = integer_hash(0) * kPrime + integer_hash(0);
  bson_t doc = BSON_INITIALIZER;
  bson_t items;
  bson_append_array_begin(&doc, "t", 1, &items);
  char key[16];
  for (int i = 0; i < kItems; ++i) {
    const int64_t y = static_cast<int64_t>(unmix(target - integer_hash(i) * kPrime) ^ 1);
    ASSERT_EQ(integer_hash(i) * kPrime + integer_hash(y), target);
    std::snprintf(key, sizeof key, "%d", i);
    bson_t pair;
    bson_append_array_begin(&items, key, -1, &pair);
    BSON_APPEND_INT64(&pair, "0", i);
    BSON_APPEND_INT64(&pair, "1", y);
    bson_append_array_end(&items, &pair);
  }
  bson_append_array_end(&doc, &items);
  const auto unique = compile(R"({"properties": {"t": {"uniqueItems": true}}})");
  const auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(unique->matches({bson_get_data(&doc), doc.len}));
  const auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started);
  std::printf("uniqueItems over %d items sharing one hash: %.3f s\n", kItems, took.count());
  bson_destroy(&doc);
}

}  // namespace
}  // namespace docguard::schema
