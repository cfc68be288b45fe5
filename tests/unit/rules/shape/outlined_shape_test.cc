// A document's shape read from the outline its validation took is the shape its own walk
// measures: the same bytes, depth, arrays (paths, lengths, and their order) and _id.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "docguard/codec/document_outline.h"
#include "docguard/rules/document_shape.h"
#include "test_messages.h"

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

using testing::Bson;

std::vector<std::pair<std::string, uint32_t>> arrays_in_order(const DocumentShape& shape) {
  std::vector<std::pair<std::string, uint32_t>> out;
  for (const ArrayMeasure* a = shape.arrays_begin(); a != shape.arrays_end(); ++a) {
    out.emplace_back(a->path, a->length);
  }
  return out;
}

// Measures `json` both ways; `outlined`: whether the outline was complete enough to be read.
void expect_the_same_shape(const std::string& json, bool outlined = true) {
  SCOPED_TRACE(json);
  Bson doc(json);
  size_t offset = 0;
  codec::DocumentOutline outline;
  ASSERT_TRUE(codec::bson_structure_valid(doc.view(), &offset, &outline));
  EXPECT_EQ(outline.describes(doc.view()), outlined);
  DocumentShape walked;
  walked.measure(doc.view());
  DocumentShape read;
  read.measure(doc.view(), outline);
  EXPECT_EQ(read.bytes(), walked.bytes());
  EXPECT_EQ(read.depth(), walked.depth());
  EXPECT_EQ(arrays_in_order(read), arrays_in_order(walked));
  ASSERT_EQ(read.has_id(), walked.has_id());
  if (walked.has_id()) {
    EXPECT_EQ(read.id_element().key.data(), walked.id_element().key.data());
    EXPECT_EQ(read.id_element().value, walked.id_element().value);
    EXPECT_EQ(read.id_element().value_size, walked.id_element().value_size);
  }
}

TEST(OutlinedShapeTest, IsTheShapeTheWalkMeasures) {
  for (const char* json : {
           R"({})",
           R"({"_id": 7, "a": 1})",
           R"({"a": 1, "_id": {"k": [1, 2]}, "_id": 3})",  // the first _id, not first
           R"({"a": 1})",
           R"({"tags": [1, 2, 3], "dims": {"w": 1, "h": 2}})",
           R"({"_id": 7, "name": "w", "reviews": [1, 2, 3],
               "variants": [{"tags": [1, 2]}, {"tags": [1, 2, 3, 4]}, {"sku": "x"}],
               "matrix": [[1, 2], [1]], "meta": {"deep": {"list": []}}})",
           // Paths meet again: the longest length of a path is kept where it was first met.
           R"({"a": {"b": [1]}, "c": [{"d": [1, 2]}], "a2": [{"b": [1, 2, 3]}, {"b": []}]})",
           R"({"x": [[[1, 2, 3]], [[1]]], "y": [{"z": [[]]}]})",
           // Empty keys: a path built by joining keys with dots, as the walk joins them.
           R"({"": {"": [1], "x": [2, 3]}, "e": {"": {"": []}}})",
           R"json({"cws": {"$code": "g()", "$scope": {"x": [1, 2]}}, "l": [{"$code": "h()"}]})json",
       }) {
    expect_the_same_shape(json);
  }
}

TEST(OutlinedShapeTest, DeepAndWideDocumentsAreWalkedPastTheOutlinesCapacity) {
  std::string deep = R"({"a": [1]})";  // as many containers as are noted, nested
  for (uint32_t i = 0; i < codec::DocumentOutline::kCapacity - 1; ++i) {
    deep = R"({"n": )" + deep + "}";
  }
  expect_the_same_shape(deep);
  expect_the_same_shape(R"({"n": )" + deep + "}", /*outlined=*/false);
  std::string wide = R"({"_id": 1, "m": [)";
  for (uint32_t i = 0; i < codec::DocumentOutline::kCapacity; ++i) wide += i ? ", [1]" : "[1]";
  expect_the_same_shape(wide + "]}", /*outlined=*/false);
}

// A key longer than 16 bits can count: its path is the whole key, not the key cut to a
// length that wrapped (which could name another field, "tags", and meet that field's bound).
TEST(OutlinedShapeTest, AKeyOfMoreThanSixtyFourKibibytesIsReadWhole) {
  const std::string key = "tags" + std::string(65536, 'x');
  expect_the_same_shape(R"({"_id": 1, ")" + key + R"(": [1, 2], "d": {")" + key + R"(": [1]}})");
  Bson doc(R"({")" + key + R"(": [1, 2, 3]})");
  size_t offset = 0;
  codec::DocumentOutline outline;
  ASSERT_TRUE(codec::bson_structure_valid(doc.view(), &offset, &outline));
  DocumentShape shape;
  shape.measure(doc.view(), outline);
  ASSERT_EQ(shape.array_count(), 1u);
  EXPECT_EQ(shape.arrays_begin()->path, key);
}

TEST(OutlinedShapeTest, AnOutlineOfOtherBytesIsNotRead) {
  Bson outlined(R"({"_id": 1, "a": [1, 2]})");
  Bson other(R"({"b": [1, 2, 3]})");
  size_t offset = 0;
  codec::DocumentOutline outline;
  ASSERT_TRUE(codec::bson_structure_valid(outlined.view(), &offset, &outline));
  DocumentShape shape;
  shape.measure(other.view(), outline);
  ASSERT_EQ(shape.array_count(), 1u);
  EXPECT_EQ(shape.arrays_begin()->path, "b");
  EXPECT_EQ(shape.arrays_begin()->length, 3u);
  EXPECT_FALSE(shape.has_id());
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
