// Query shapes from filters, sorts and pipelines; which indexes serve them; the index to suggest;
// the bounded counter.
#include "docguard/advisor/query_shape.h"

#include <gtest/gtest.h>

#include "docguard/codec/bson_view.h"

namespace docguard::advisor {
namespace {
namespace DOCGUARD_UNITY_ID {

codec::OwnedBson json(const char* text) {
  bson_error_t error;
  bson_t* doc = bson_new_from_json(reinterpret_cast<const uint8_t*>(text), -1, &error);
  EXPECT_NE(doc, nullptr) << error.message << " in " << text;
  return codec::OwnedBson(doc ? doc : bson_new());
}

QueryShape shape_of(const char* filter, const char* sort = nullptr) {
  const codec::OwnedBson f = json(filter);
  if (!sort) return query_shape(f.get(), nullptr);
  const codec::OwnedBson s = json(sort);
  return query_shape(f.get(), s.get());
}

using Strings = std::vector<std::string>;

IndexSpec index_on(std::vector<std::pair<std::string, std::string>> keys) {
  IndexSpec index;
  index.keys = std::move(keys);
  for (const auto& [field, type] : index.keys) index.name += field + "_" + type;
  return index;
}

TEST(QueryShape, EqualitySortRangeGiveTheIndexInThatOrder) {
  const QueryShape shape = shape_of(R"({"a": 1, "b": {"$gt": 2}})", R"({"c": -1})");
  EXPECT_EQ(shape.equality, Strings{"a"});
  ASSERT_EQ(shape.sort.size(), 1u);
  EXPECT_EQ(shape.sort[0].field, "c");
  EXPECT_EQ(shape.sort[0].direction, -1);
  EXPECT_EQ(shape.range, Strings{"b"});
  EXPECT_EQ(shape.key(), "eq: a; sort: c:-1; range: b");
  EXPECT_EQ(shape.first_field(), "a");
  EXPECT_EQ(index_keys_text(suggest_index(shape)), "{a: 1, c: -1, b: 1}");
}

TEST(QueryShape, InAndEqAreEqualityComparisonsAndRegexesAreRanges) {
  const QueryShape shape = shape_of(
      R"({"status": {"$in": ["A", "B"]}, "type": {"$eq": "x"}, "name": {"$regex": "^ab"},
          "qty": {"$gte": 1, "$lt": 5}, "code": {"$regularExpression": {"pattern": "^a",
          "options": "i"}}, "tags": {"$nin": ["x"]}, "note": {"$exists": true}})");
  EXPECT_EQ(shape.equality, (Strings{"status", "type"}));
  EXPECT_EQ(shape.range, (Strings{"code", "name", "note", "qty", "tags"}));
  EXPECT_TRUE(shape.skipped.empty());
}

TEST(QueryShape, DottedPathsAndWholeEmbeddedDocumentsAreEquality) {
  const QueryShape shape = shape_of(R"({"address.city": "Oslo", "size": {"h": 14, "w": 21}})");
  EXPECT_EQ(shape.equality, (Strings{"address.city", "size"}));
  EXPECT_EQ(index_keys_text(suggest_index(shape)), R"({"address.city": 1, size: 1})");
}

TEST(QueryShape, AndClausesMerge) {
  const QueryShape shape =
      shape_of(R"({"$and": [{"a": 1}, {"b": {"$gt": 1}}, {"$and": [{"d": 2}]}], "c": 2})");
  EXPECT_EQ(shape.equality, (Strings{"a", "c", "d"}));
  EXPECT_EQ(shape.range, Strings{"b"});
}

TEST(QueryShape, OrClausesAreLeftOutAndNamed) {
  const QueryShape shape = shape_of(R"({"$or": [{"a": 1}, {"b": 1}], "c": 1})");
  EXPECT_EQ(shape.equality, Strings{"c"});
  EXPECT_EQ(shape.skipped, Strings{"$or"});
  EXPECT_TRUE(shape_of(R"({"$or": [{"a": 1}, {"b": 1}]})").empty());
  EXPECT_TRUE(shape_of(R"({"$nor": [{"a": 1}]})").empty());
}

TEST(QueryShape, TextExprWhereAndGeoAreLeftOut) {
  const QueryShape shape = shape_of(
      R"({"$text": {"$search": "x"}, "$expr": {"$gt": ["$a", "$b"]}, "$where": "true",
          "loc": {"$near": {"$geometry": {"type": "Point", "coordinates": [0, 0]}}}})");
  EXPECT_TRUE(shape.empty());
  EXPECT_EQ(shape.skipped, (Strings{"$expr", "$near", "$text", "$where"}));
  EXPECT_TRUE(shape_of(R"({"$comment": "x"})").skipped.empty());
}

TEST(QueryShape, ElemMatchOnDocumentsReachesTheirFields) {
  QueryShape shape = shape_of(R"({"items": {"$elemMatch": {"sku": "x", "qty": {"$gt": 2}}}})");
  EXPECT_EQ(shape.equality, Strings{"items.sku"});
  EXPECT_EQ(shape.range, Strings{"items.qty"});
  shape = shape_of(R"({"scores": {"$elemMatch": {"$gte": 80, "$lt": 90}}})");
  EXPECT_EQ(shape.range, Strings{"scores"});
  EXPECT_TRUE(shape.equality.empty());
}

TEST(QueryShape, EqualityWinsOverARangeOnTheSameField) {
  const QueryShape shape = shape_of(R"({"a": {"$gte": 1, "$in": [1, 2]}, "b": {"$ne": 3}})");
  EXPECT_EQ(shape.equality, Strings{"a"});
  EXPECT_EQ(shape.range, Strings{"b"});
}

TEST(QueryShape, DbRefValueIsEquality) {
  const QueryShape shape = shape_of(R"({"owner": {"$ref": "users", "$id": 5}})");
  EXPECT_EQ(shape.equality, Strings{"owner"});
}

TEST(QueryShape, SortOnAnEqualityFieldIsDroppedAndMetaSortIgnored) {
  QueryShape shape = shape_of(R"({"a": 1})", R"({"a": 1, "t": -1})");
  ASSERT_EQ(shape.sort.size(), 1u);
  EXPECT_EQ(shape.sort[0].field, "t");
  shape = shape_of(R"({"a": 1})", R"({"score": {"$meta": "textScore"}, "t": 1})");
  EXPECT_TRUE(shape.sort.empty());
  EXPECT_EQ(shape.skipped, Strings{"$meta"});
}

TEST(QueryShape, KeyIsTheSameWhateverTheFieldOrder) {
  EXPECT_EQ(shape_of(R"({"b": 1, "a": 1, "z": {"$lt": 1}})").key(),
            shape_of(R"({"z": {"$lt": 4}, "a": "x", "b": 2})").key());
  EXPECT_EQ(shape_of(R"({})", R"({"t": -1, "u": 1})").key(), "sort: t:-1, u:1");
  EXPECT_TRUE(shape_of(R"({})").empty());
}

TEST(QueryShape, PipelineUsesTheLeadingMatchAndSort) {
  const codec::OwnedBson pipeline = json(
      R"([{"$match": {"a": 1}}, {"$sort": {"t": -1}}, {"$match": {"b": {"$gt": 1}}},
          {"$group": {"_id": "$a"}}, {"$match": {"z": 1}}])");
  const QueryShape shape = pipeline_query_shape(pipeline.get());
  EXPECT_EQ(shape.key(), "eq: a; sort: t:-1; range: b");
  const codec::OwnedBson late = json(R"([{"$group": {"_id": "$a"}}, {"$match": {"z": 1}}])");
  EXPECT_TRUE(pipeline_query_shape(late.get()).empty());
  EXPECT_TRUE(pipeline_query_shape(nullptr).empty());
}

TEST(SupportedBy, SomePredicateFieldMustLeadAnIndex) {
  const QueryShape shape = shape_of(R"({"a": 1, "b": 2, "c": {"$gt": 1}})");
  EXPECT_TRUE(supported_by(shape, {index_on({{"b", "1"}, {"x", "1"}})}));
  EXPECT_TRUE(supported_by(shape, {index_on({{"a", "-1"}})}));
  // The server's planner uses an index for any sargable predicate on its leading field: a range
  // on c is enough (ESR order is tuning, not a missing index).
  EXPECT_TRUE(supported_by(shape, {index_on({{"c", "1"}})}));
  EXPECT_FALSE(supported_by(shape, {index_on({{"x", "1"}, {"a", "1"}})}));
  EXPECT_FALSE(supported_by(shape, {}));
}

TEST(SupportedBy, WithoutEqualityTheSortOrARangeFieldMustLead) {
  const QueryShape shape = shape_of(R"({"p": {"$gt": 1}, "q": {"$lt": 2}})", R"({"t": -1})");
  EXPECT_TRUE(supported_by(shape, {index_on({{"t", "1"}})}));  // walked backwards
  EXPECT_TRUE(supported_by(shape, {index_on({{"q", "1"}, {"t", "1"}})}));
  EXPECT_FALSE(supported_by(shape, {index_on({{"x", "1"}, {"t", "1"}})}));
}

TEST(SupportedBy, SpecialIndexTypes) {
  const QueryShape eq = shape_of(R"({"a": 1})");
  const QueryShape range = shape_of(R"({"a": {"$gt": 1}})");
  const QueryShape nested = shape_of(R"({"attrs.color": "red"})");
  const QueryShape sort_only = shape_of(R"({})", R"({"a": 1})");
  EXPECT_FALSE(supported_by(eq, {index_on({{"a", "text"}})}));
  EXPECT_FALSE(supported_by(eq, {index_on({{"a", "2dsphere"}})}));
  EXPECT_TRUE(supported_by(eq, {index_on({{"a", "hashed"}})}));
  EXPECT_FALSE(supported_by(range, {index_on({{"a", "hashed"}})}));
  EXPECT_TRUE(supported_by(eq, {index_on({{"$**", "1"}})}));
  EXPECT_TRUE(supported_by(nested, {index_on({{"attrs.$**", "1"}})}));
  EXPECT_FALSE(supported_by(eq, {index_on({{"attrs.$**", "1"}})}));
  EXPECT_FALSE(supported_by(sort_only, {index_on({{"$**", "1"}})}));
}

TEST(SupportedBy, TheSuggestedIndexServesItsShape) {
  for (const auto& [filter, sort] : std::vector<std::pair<const char*, const char*>>{
           {R"({"a": 1, "b": {"$gt": 2}})", R"({"c": -1})"},
           {R"({"b": {"$gt": 2}})", R"({"c": -1})"},
           {R"({"b": {"$gt": 2}, "c": {"$lt": 1}})", R"({})"},
           {R"({})", R"({"c": -1})"}}) {
    const QueryShape shape = shape_of(filter, sort);
    EXPECT_TRUE(supported_by(shape, {index_on(suggest_index(shape))})) << shape.key();
  }
  // A range field that is also sorted on appears once, in the sort's place.
  const QueryShape shape = shape_of(R"({"a": 1, "t": {"$gt": 1}})", R"({"t": -1})");
  EXPECT_EQ(index_keys_text(suggest_index(shape)), "{a: 1, t: -1}");
}

TEST(IndexKeyDirection, NumbersAreDirectionsNamesAreNot) {
  EXPECT_EQ(index_key_direction("1"), 1);
  EXPECT_EQ(index_key_direction("-1"), -1);
  EXPECT_EQ(index_key_direction("1.0"), 1);
  EXPECT_EQ(index_key_direction("2dsphere"), 0);
  EXPECT_EQ(index_key_direction("2d"), 0);
  EXPECT_EQ(index_key_direction("hashed"), 0);
  EXPECT_EQ(index_key_direction("0"), 0);
  EXPECT_EQ(index_key_direction(""), 0);
  EXPECT_EQ(index_key_direction("-"), 0);
}

TEST(QueryShapeCounter, CountsEachShapeAndBoundsTheDistinctOnes) {
  QueryShapeCounter counter(2);
  EXPECT_TRUE(counter.record(shape_of(R"({"a": 1})")));
  EXPECT_TRUE(counter.record(shape_of(R"({"a": 7})"), 4));
  EXPECT_TRUE(counter.record(shape_of(R"({"b": 1})")));
  EXPECT_FALSE(counter.record(shape_of(R"({"c": 1})"), 3));
  EXPECT_FALSE(counter.record(shape_of(R"({})")));
  ASSERT_EQ(counter.shapes().size(), 2u);
  EXPECT_EQ(counter.shapes().at("eq: a").count, 5u);
  EXPECT_EQ(counter.shapes().at("eq: b").count, 1u);
  EXPECT_EQ(counter.overflow(), 3u);
  EXPECT_TRUE(counter.record(shape_of(R"({"b": 2})")));  // a known shape still counts when full
  EXPECT_EQ(counter.shapes().at("eq: b").count, 2u);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::advisor
