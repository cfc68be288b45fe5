// Index key values as the shell shows them, from each place they come from: a listIndexes reply
// (and the createIndexes request the live catalog reads), a dump's metadata.json, and a fleet's
// shared facts. A key's value can be any double; none may be cast out of range.
#include <bson/bson.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "docguard/advisor/catalog_documents.h"
#include "docguard/advisor/cluster_metadata.h"
#include "docguard/advisor/collection_metadata.h"
#include "docguard/advisor/query_shape.h"
#include "docguard/advisor/shared_facts.h"

namespace docguard::advisor {
namespace {
namespace DOCGUARD_UNITY_ID {

// {v: 2, key: {a: <huge>, b: NaN, c: -Infinity, d: 1.0, e: -1.5, f: Decimal128 1}, name: "odd"}
std::vector<uint8_t> index_with_odd_doubles() {
  bson_t* doc = bson_new();
  BSON_APPEND_INT32(doc, "v", 2);
  bson_t key;
  BSON_APPEND_DOCUMENT_BEGIN(doc, "key", &key);
  BSON_APPEND_DOUBLE(&key, "a", 3.25286e+219);
  BSON_APPEND_DOUBLE(&key, "b", std::numeric_limits<double>::quiet_NaN());
  BSON_APPEND_DOUBLE(&key, "c", -std::numeric_limits<double>::infinity());
  BSON_APPEND_DOUBLE(&key, "d", 1.0);
  BSON_APPEND_DOUBLE(&key, "e", -1.5);
  bson_decimal128_t one;
  bson_decimal128_from_string("1", &one);
  BSON_APPEND_DECIMAL128(&key, "f", &one);
  bson_append_document_end(doc, &key);
  BSON_APPEND_UTF8(doc, "name", "odd");
  std::vector<uint8_t> out(bson_get_data(doc), bson_get_data(doc) + doc->len);
  bson_destroy(doc);
  return out;
}

using Keys = std::vector<std::pair<std::string, std::string>>;
const Keys kShown = {{"a", "3.25286e+219"}, {"b", "NaN"}, {"c", "-Infinity"}, {"d", "1"},
                     {"e", "-1.5"},         {"f", "1"}};

void expect_directions(const Keys& keys) {
  ASSERT_EQ(keys.size(), 6u);
  EXPECT_EQ(index_key_direction(keys[0].second), 1);  // any positive number ascends
  EXPECT_EQ(index_key_direction(keys[1].second), 0);  // NaN is no direction
  EXPECT_EQ(index_key_direction(keys[2].second), 0);  // nor is an infinity
  EXPECT_EQ(index_key_direction(keys[3].second), 1);
  EXPECT_EQ(index_key_direction(keys[4].second), -1);  // any negative number descends
  EXPECT_EQ(index_key_direction(keys[5].second), 1);
}

TEST(IndexKeyValues, FromAListIndexesReply) {
  const std::vector<uint8_t> index = index_with_odd_doubles();
  IndexSpec spec;
  ASSERT_TRUE(read_index_spec(index.data(), static_cast<uint32_t>(index.size()), &spec));
  EXPECT_EQ(spec.keys, kShown);
  expect_directions(spec.keys);

  CollectionMetadata m;
  ASSERT_TRUE(apply_index_documents({index}, &m));
  ASSERT_EQ(m.indexes.size(), 1u);
  EXPECT_EQ(m.indexes[0].keys, kShown);
}

TEST(IndexKeyValues, FromADumpsMetadata) {
  const std::string json = R"({"indexes": [{"v": {"$numberInt": "2"}, "key": {
      "a": {"$numberDouble": "3.25286e+219"}, "b": {"$numberDouble": "NaN"},
      "c": {"$numberDouble": "-Infinity"}, "d": {"$numberDouble": "1.0"},
      "e": {"$numberDouble": "-1.5"}, "f": {"$numberDecimal": "1"}}, "name": "odd"}],
      "collectionName": "orders", "type": "collection"})";
  CollectionMetadata m;
  ASSERT_TRUE(parse_metadata_json(json, &m));
  ASSERT_EQ(m.indexes.size(), 1u);
  EXPECT_EQ(m.indexes[0].keys, kShown);
  expect_directions(m.indexes[0].keys);
}

TEST(IndexKeyValues, ThroughAFleetsSharedFacts) {
  const std::vector<uint8_t> index = index_with_odd_doubles();
  SharedCollection shared;
  shared.metadata.db = "shop";
  shared.metadata.collection = "orders";
  shared.metadata.known = true;
  shared.metadata.indexes_known = true;
  ASSERT_TRUE(read_index_spec(index.data(), static_cast<uint32_t>(index.size()),
                              &shared.metadata.indexes.emplace_back()));
  const std::vector<uint8_t> stored = shared_collection_bson(shared);
  SharedCollection reread;
  ASSERT_TRUE(read_shared_collection(stored.data(), static_cast<uint32_t>(stored.size()), &reread));
  ASSERT_EQ(reread.metadata.indexes.size(), 1u);
  EXPECT_EQ(reread.metadata.indexes[0].keys, kShown);
  expect_directions(reread.metadata.indexes[0].keys);
}

TEST(IndexKeyValues, WholeDoublesAreIntegersOthersKeepTheirDigits) {
  for (const auto& [value, text] :
       std::vector<std::pair<double, std::string>>{{-1.0, "-1"},
                                                   {0.0, "0"},
                                                   {9007199254740991.0, "9007199254740991"},
                                                   {9007199254740992.0, "9007199254740992"},
                                                   {-9.3e18, "-9.3e+18"},
                                                   {1e300, "1e+300"},
                                                   {0.25, "0.25"}}) {
    bson_t* doc = BCON_NEW("k", BCON_DOUBLE(value));
    codec::BsonElements k(doc);
    ASSERT_TRUE(k.find("k"));
    EXPECT_EQ(index_key_text(k), text) << value;
    bson_destroy(doc);
  }
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::advisor
