#include "docguard/rules/document_shape.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "test_messages.h"

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

using testing::Bson;

std::map<std::string, uint32_t> arrays_of(const DocumentShape& shape) {
  std::map<std::string, uint32_t> out;
  for (const ArrayMeasure* a = shape.arrays_begin(); a != shape.arrays_end(); ++a) {
    out[a->path] = a->length;
  }
  return out;
}

TEST(DocumentShapeTest, MeasuresSizeDepthAndArraysPerPath) {
  Bson doc(R"({"_id": 7, "name": "w", "reviews": [1, 2, 3],
               "variants": [{"tags": [1, 2]}, {"tags": [1, 2, 3, 4]}, {"sku": "x"}],
               "matrix": [[1, 2], [1]], "meta": {"deep": {"list": []}}})");
  DocumentShape shape;
  shape.measure(doc.view());
  EXPECT_EQ(shape.bytes(), doc.view().size);
  // top(1) -> variants array(2) -> element doc(3) -> tags array(4)
  EXPECT_EQ(shape.depth(), 4u);
  auto arrays = arrays_of(shape);
  EXPECT_EQ(arrays["reviews"], 3u);
  EXPECT_EQ(arrays["variants"], 3u);
  EXPECT_EQ(arrays["variants.tags"], 4u);  // longest of the element arrays
  EXPECT_EQ(arrays["matrix"], 2u);         // inner arrays share the path
  EXPECT_EQ(arrays["meta.deep.list"], 0u);
  EXPECT_EQ(arrays.size(), 5u);
  ASSERT_TRUE(shape.has_id());
  ASSERT_TRUE(shape.id_element().holds_int32());
  EXPECT_EQ(shape.id_element().int32(), 7);
}

// The walk steps over every value type by its size: an array after one of each counts right.
TEST(DocumentShapeTest, StepsOverEveryValueType) {
  Bson doc(R"json({"d": 1.5, "s": "text", "o": {"$oid": "0123456789abcdef01234567"},
    "b": true, "t": {"$date": 1}, "n": null,
    "r": {"$regularExpression": {"pattern": "a.c", "options": "i"}}, "i": 1,
    "ts": {"$timestamp": {"t": 1, "i": 2}}, "l": {"$numberLong": "5"},
    "m": {"$numberDecimal": "1.5"}, "bin": {"$binary": {"base64": "AAEC", "subType": "00"}},
    "mn": {"$minKey": 1}, "mx": {"$maxKey": 1}, "code": {"$code": "f()"}, "last": [1, 2, 3]})json");
  DocumentShape shape;
  shape.measure(doc.view());
  auto arrays = arrays_of(shape);
  EXPECT_EQ(arrays["last"], 3u);
  EXPECT_EQ(arrays.size(), 1u);
}

// Bytes the walk is handed need not have been validated: an element whose length runs past
// its container ends the walk there, without reading beyond the bytes.
TEST(DocumentShapeTest, AMalformedElementEndsTheWalk) {
  Bson doc(R"({"a": [1, 2], "s": "text", "z": [1]})");
  std::vector<uint8_t> bytes(doc.view().data, doc.view().data + doc.view().size);
  // The string's length prefix: after "a"'s array, type byte 0x02, key "s\0".
  const auto at =
      std::search(bytes.begin(), bytes.end(), std::begin("\x02s"), std::end("\x02s") - 1);
  ASSERT_NE(at, bytes.end());
  const size_t length_at = static_cast<size_t>(at - bytes.begin()) + 3;
  bytes[length_at] = 0xff;  // 255 bytes of string in a document far shorter
  DocumentShape shape;
  shape.measure(codec::BsonView{bytes.data(), static_cast<uint32_t>(bytes.size())});
  auto arrays = arrays_of(shape);
  EXPECT_EQ(arrays["a"], 2u);
  EXPECT_EQ(arrays.count("z"), 0u);
}

TEST(DocumentShapeTest, FlatDocumentHasDepthOneAndNoArrays) {
  Bson doc(R"({"a": 1, "b": "x"})");
  DocumentShape shape;
  shape.measure(doc.view());
  EXPECT_EQ(shape.depth(), 1u);
  EXPECT_EQ(shape.array_count(), 0u);
  EXPECT_FALSE(shape.has_id());
}

TEST(DocumentShapeTest, ReuseClearsPreviousMeasurements) {
  Bson a(R"({"x": [1, 2, 3]})");
  Bson b(R"({"y": {"z": 1}})");
  DocumentShape shape;
  shape.measure(a.view());
  shape.clear();
  shape.measure(b.view());
  EXPECT_EQ(shape.array_count(), 0u);
  EXPECT_EQ(shape.depth(), 2u);
}

TEST(DocumentShapeTest, DeepNestingIsMeasured) {
  std::string json = "{\"a\": 1}";
  for (int i = 0; i < 30; ++i) json = "{\"n\": " + json + "}";
  Bson doc(json);
  DocumentShape shape;
  shape.measure(doc.view());
  EXPECT_EQ(shape.depth(), 31u);
}

TEST(UpdateShapeTest, PushAndAddToSetGrowth) {
  Bson u(R"({"$push": {"reviews": {"text": "x"}, "log": {"$each": [1, 2, 3, 4, 5], "$slice": -10},
                       "variants.$.tags": {"$each": [1, 2]}},
             "$addToSet": {"labels": {"$each": [1, 2, 3]}, "one": 5},
             "$inc": {"n": 1}})");
  UpdateShape shape;
  shape.measure(u.view(), false);
  ASSERT_EQ(shape.growth_count(), 5u);
  const auto& g = shape.growth();
  EXPECT_EQ(g[0].path, "reviews");
  EXPECT_EQ(g[0].elements, 1u);
  EXPECT_FALSE(g[0].has_slice);
  EXPECT_EQ(g[1].path, "log");
  EXPECT_EQ(g[1].elements, 5u);
  EXPECT_TRUE(g[1].has_slice);
  EXPECT_EQ(g[1].slice_cap, 10u);
  EXPECT_EQ(g[2].path, "variants.tags");
  EXPECT_EQ(g[2].elements, 2u);
  EXPECT_STREQ(g[3].op, "$addToSet");
  EXPECT_EQ(g[3].elements, 3u);
  EXPECT_EQ(g[4].elements, 1u);
}

TEST(UpdateShapeTest, SetOfWholeArraysAndDocuments) {
  Bson u(R"({"$set": {"tags": [1, 2, 3], "a.b": {"c": [1, 2]}, "name": "x"}})");
  UpdateShape shape;
  shape.measure(u.view(), false);
  EXPECT_EQ(shape.growth_count(), 0u);
  auto arrays = arrays_of(shape.set_values());
  EXPECT_EQ(arrays["tags"], 3u);
  EXPECT_EQ(arrays["a.b.c"], 2u);
  // a(1) . b -> the value document is at depth 3, its array c at depth 4.
  EXPECT_EQ(shape.set_values().depth(), 4u);
}

TEST(UpdateShapeTest, PipelineConcatArraysLiterals) {
  Bson u(R"({"p": [{"$set": {"tags": {"$concatArrays": ["$tags", [1, 2, 3], {"$literal": [4]}]}}},
                  {"$addFields": {"recent": {"$slice": [{"$concatArrays": ["$recent", [1]]}, -5]}}},
                  {"$set": {"fixed": [1, 2]}}]})");
  bson_iter_t it;
  ASSERT_TRUE(bson_iter_init_find(&it, u.get(), "p"));
  UpdateShape shape;
  shape.measure(codec::view_of(it), true);
  ASSERT_EQ(shape.growth_count(), 2u);
  EXPECT_EQ(shape.growth()[0].path, "tags");
  EXPECT_EQ(shape.growth()[0].elements, 4u);
  EXPECT_FALSE(shape.growth()[0].has_slice);
  EXPECT_EQ(shape.growth()[1].path, "recent");
  EXPECT_TRUE(shape.growth()[1].has_slice);
  EXPECT_EQ(shape.growth()[1].slice_cap, 5u);
  EXPECT_EQ(arrays_of(shape.set_values())["fixed"], 2u);
}

TEST(UpdateShapeTest, OperatorDocumentDetection) {
  EXPECT_TRUE(codec::is_operator_document(Bson(R"({"$set": {"a": 1}})").view()));
  EXPECT_FALSE(codec::is_operator_document(Bson(R"({"a": 1})").view()));
  EXPECT_FALSE(codec::is_operator_document(Bson("{}").view()));
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
