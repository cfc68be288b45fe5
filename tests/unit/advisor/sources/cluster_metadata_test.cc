// Collection metadata from the cluster's replies (hand-built BSON in the shapes listCollections,
// listIndexes, $collStats / collStats and $indexStats give), the same fields from a dump's
// metadata.json, and what the detectors make of facts that are unknown.
#include "docguard/advisor/cluster_metadata.h"

#include <bson/bson.h>
#include <gtest/gtest.h>

#include <vector>

#include "docguard/advisor/detectors.h"
#include "docguard/advisor/dump_reader.h"
#include "docguard/advisor/report.h"
#include "test_documents.h"

namespace docguard::advisor {
namespace {
namespace DOCGUARD_UNITY_ID {

std::vector<uint8_t> bytes_of(bson_t* doc) {
  const uint8_t* data = bson_get_data(doc);
  std::vector<uint8_t> out(data, data + doc->len);
  bson_destroy(doc);
  return out;
}

TEST(ClusterMetadata, CollectionEntryWithValidatorAndOptions) {
  auto entry = bytes_of(BCON_NEW(
      "name", "orders", "type", "collection", "options", "{", "validator", "{", "total", "{",
      "$gte", BCON_INT32(0), "}", "}", "validationLevel", "moderate", "validationAction", "warn",
      "capped", BCON_BOOL(true), "}", "info", "{", "readOnly", BCON_BOOL(false), "}"));
  CollectionMetadata m;
  ASSERT_TRUE(apply_collection_entry(entry, &m));
  EXPECT_TRUE(m.known);
  EXPECT_EQ(m.collection, "orders");
  EXPECT_EQ(m.type, "collection");
  EXPECT_TRUE(m.has_validator);
  EXPECT_NE(m.validator_json.find("\"$gte\""), std::string::npos) << m.validator_json;
  EXPECT_EQ(m.validation_level, "moderate");
  EXPECT_EQ(m.validation_action, "warn");
  EXPECT_TRUE(m.capped);
}

TEST(ClusterMetadata, ViewsTimeSeriesAndOldServers) {
  CollectionMetadata view, series, old;
  ASSERT_TRUE(apply_collection_entry(
      bytes_of(BCON_NEW("name", "v", "type", "view", "options", "{", "viewOn", "orders", "}")),
      &view));
  EXPECT_TRUE(view.is_view());
  EXPECT_FALSE(view.has_validator);
  ASSERT_TRUE(
      apply_collection_entry(bytes_of(BCON_NEW("name", "m", "type", "timeseries")), &series));
  EXPECT_TRUE(series.is_timeseries());
  ASSERT_TRUE(apply_collection_entry(bytes_of(BCON_NEW("name", "c")), &old));
  EXPECT_EQ(old.type, "collection");
  CollectionMetadata nameless;
  EXPECT_FALSE(apply_collection_entry(bytes_of(BCON_NEW("type", "collection")), &nameless));
  EXPECT_FALSE(apply_collection_entry(std::vector<uint8_t>{1, 2, 3}, &nameless));
}

TEST(ClusterMetadata, IndexOptions) {
  std::vector<std::vector<uint8_t>> indexes;
  indexes.push_back(bytes_of(
      BCON_NEW("v", BCON_INT32(2), "key", "{", "_id", BCON_INT32(1), "}", "name", "_id_")));
  indexes.push_back(bytes_of(BCON_NEW("v", BCON_INT32(2), "key", "{", "email", BCON_INT32(1), "}",
                                      "name", "email_1", "unique", BCON_BOOL(true), "sparse",
                                      BCON_BOOL(true), "collation", "{", "locale", "en", "}")));
  indexes.push_back(bytes_of(
      BCON_NEW("key", "{", "createdAt", BCON_DOUBLE(-1.0), "}", "name", "ttl", "expireAfterSeconds",
               BCON_INT64(3600), "partialFilterExpression", "{", "kept", BCON_BOOL(false), "}")));
  indexes.push_back(
      bytes_of(BCON_NEW("key", "{", "body", "text", "_fts", "text", "}", "name", "body_text")));
  CollectionMetadata m;
  m.indexes_known = false;
  ASSERT_TRUE(apply_index_documents(indexes, &m));
  ASSERT_TRUE(m.indexes_known);
  ASSERT_EQ(m.indexes.size(), 4u);
  EXPECT_EQ(m.indexes[0].name, "_id_");
  EXPECT_FALSE(m.indexes[0].unique);
  const IndexSpec& email = m.indexes[1];
  EXPECT_TRUE(email.unique);
  EXPECT_TRUE(email.sparse);
  EXPECT_TRUE(email.collation);
  EXPECT_FALSE(email.partial);
  const IndexSpec& ttl = m.indexes[2];
  ASSERT_EQ(ttl.keys.size(), 1u);
  EXPECT_EQ(ttl.keys[0], (std::pair<std::string, std::string>{"createdAt", "-1"}));
  EXPECT_EQ(ttl.expire_after_seconds, 3600);
  EXPECT_TRUE(ttl.partial);
  EXPECT_EQ(m.indexes[3].keys[1].second, "text");
  EXPECT_TRUE(m.indexed_as_prefix("email"));
  EXPECT_FALSE(m.indexed_as_prefix("_fts"));
}

TEST(ClusterMetadata, StatisticsFromEitherReply) {
  // $collStats storageStats has int64 numbers; an old collStats reply doubles or int32s.
  CollectionMetadata m;
  ASSERT_TRUE(apply_collection_stats(
      bytes_of(BCON_NEW("count", BCON_INT64(2000), "size", BCON_INT64(400000), "avgObjSize",
                        BCON_INT32(200), "storageSize", BCON_DOUBLE(131072.0), "nindexes",
                        BCON_INT32(2))),
      &m));
  EXPECT_TRUE(m.stats.known);
  EXPECT_EQ(m.stats.documents, 2000u);
  EXPECT_EQ(m.stats.size_bytes, 400000u);
  EXPECT_EQ(m.stats.average_document_bytes, 200u);
  EXPECT_EQ(m.stats.storage_bytes, 131072u);
  CollectionMetadata bad;
  EXPECT_FALSE(apply_collection_stats(bytes_of(BCON_NEW("ok", BCON_DOUBLE(1.0))), &bad));
  EXPECT_FALSE(bad.stats.known);
}

TEST(ClusterMetadata, IndexUsageByName) {
  CollectionMetadata m;
  std::vector<std::vector<uint8_t>> indexes;
  indexes.push_back(bytes_of(BCON_NEW("key", "{", "_id", BCON_INT32(1), "}", "name", "_id_")));
  indexes.push_back(bytes_of(BCON_NEW("key", "{", "a", BCON_INT32(1), "}", "name", "a_1")));
  ASSERT_TRUE(apply_index_documents(indexes, &m));
  std::vector<std::vector<uint8_t>> stats;
  stats.push_back(bytes_of(BCON_NEW("name", "a_1", "key", "{", "a", BCON_INT32(1), "}", "accesses",
                                    "{", "ops", BCON_INT64(42), "}")));
  stats.push_back(bytes_of(BCON_NEW("name", "gone", "accesses", "{", "ops", BCON_INT64(7), "}")));
  ASSERT_TRUE(apply_index_stats(stats, &m));
  EXPECT_TRUE(m.index_usage_known);
  EXPECT_FALSE(m.indexes[0].accesses.has_value());
  EXPECT_EQ(m.indexes[1].accesses, 42u);
}

TEST(ClusterMetadata, DumpMetadataJsonHasTheSameFields) {
  const char* json = R"({"indexes":[{"v":{"$numberInt":"2"},"key":{"_id":{"$numberInt":"1"}},
      "name":"_id_"},{"v":{"$numberInt":"2"},"key":{"sku":{"$numberInt":"1"}},"name":"sku_1",
      "unique":true,"partialFilterExpression":{"sku":{"$exists":true}}},{"v":{"$numberInt":"2"},
      "key":{"at":{"$numberInt":"1"}},"name":"at_1","expireAfterSeconds":{"$numberInt":"60"}}],
      "options":{"validator":{"$jsonSchema":{"bsonType":"object"}},"validationLevel":"strict",
      "validationAction":"error","capped":true},"collectionName":"products","type":"collection"})";
  CollectionMetadata m;
  ASSERT_TRUE(parse_metadata_json(json, &m));
  EXPECT_EQ(m.collection, "products");
  ASSERT_EQ(m.indexes.size(), 3u);
  EXPECT_TRUE(m.indexes[1].unique);
  EXPECT_TRUE(m.indexes[1].partial);
  EXPECT_EQ(m.indexes[2].expire_after_seconds, 60);
  EXPECT_TRUE(m.has_validator);
  EXPECT_EQ(m.validation_level, "strict");
  EXPECT_EQ(m.validation_action, "error");
  EXPECT_TRUE(m.capped);
  EXPECT_EQ(m.source, "dump");
}

// A reference field and no index list: listIndexes refused is not "no index".
TEST(ClusterMetadata, UnknownIndexesAreNotMissingIndexes) {
  AdvisorSettings settings;
  CollectionProfile profile("shop", "reviews", settings);
  for (int i = 0; i < 20; ++i) {
    bson_oid_t oid;
    bson_oid_init(&oid, nullptr);
    test_documents::feed(profile, BCON_NEW("_id", BCON_INT32(i), "productId", BCON_OID(&oid)));
  }
  CollectionMetadata m;
  m.db = "shop";
  m.collection = "reviews";
  m.known = true;
  m.source = "cluster";
  m.indexes_known = true;
  m.indexes.push_back(IndexSpec{"_id_", {{"_id", "1"}}});
  profile.set_metadata(m);
  std::vector<Finding> known;
  detect_unindexed_references(profile, settings, known);
  ASSERT_EQ(known.size(), 1u);
  EXPECT_EQ(known[0].field, "productId");
  EXPECT_EQ(known[0].source, "sample");

  m.indexes.clear();
  m.indexes_known = false;
  m.unknown.push_back("indexes: not authorized (code 13)");
  profile.set_metadata(m);
  std::vector<Finding> unknown;
  detect_unindexed_references(profile, settings, unknown);
  detect_too_many_indexes(profile, settings, unknown);
  EXPECT_TRUE(unknown.empty());
  EXPECT_NE(metadata_summary(m).find("unknown indexes"), std::string::npos) << metadata_summary(m);
}

TEST(ClusterMetadata, MetadataFindingsFromTheClusterSaySo) {
  AdvisorSettings settings;
  CollectionProfile profile("shop", "orders", settings);
  CollectionMetadata m;
  m.known = true;
  m.source = "cluster";
  m.sample_method = "find";
  profile.set_metadata(m);
  std::vector<Finding> out;
  detect_missing_validator(profile, settings, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].source, "metadata");
  EXPECT_NE(metadata_summary(m).find("sampled by find"), std::string::npos);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::advisor
