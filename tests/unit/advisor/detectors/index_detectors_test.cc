// Index detectors (unindexed query shapes, redundant and unused indexes) and the collection-count
// detectors (same-shape collections, too many in the deployment): each fires on its pattern,
// stays quiet on the counterpart, and says nothing when the index list is unknown.
#include <memory>

#include "docguard/advisor/detectors.h"
#include "docguard/codec/bson_view.h"
#include "test_documents.h"

namespace docguard::advisor {
namespace {
namespace DOCGUARD_UNITY_ID {

using test_documents::count_kind;
using test_documents::feed;
using test_documents::metadata_with_indexes;

const AdvisorSettings kSettings;

QueryShape shape_of(const char* filter, const char* sort) {
  bson_error_t error;
  const codec::OwnedBson f(
      bson_new_from_json(reinterpret_cast<const uint8_t*>(filter), -1, &error));
  const codec::OwnedBson s(bson_new_from_json(reinterpret_cast<const uint8_t*>(sort), -1, &error));
  return query_shape(f.get(), s.get());
}

IndexSpec& add_index(CollectionMetadata& m, std::vector<std::pair<std::string, std::string>> keys) {
  IndexSpec index;
  for (const auto& [field, type] : keys)
    index.name += (index.name.empty() ? "" : "_") + field + "_" + type;
  index.keys = std::move(keys);
  m.indexes.push_back(index);
  return m.indexes.back();
}

std::vector<Finding> unindexed(const QueryShapeCounter& shapes, const CollectionMetadata& m,
                               uint32_t sample_every = 1) {
  std::vector<Finding> out;
  detect_unindexed_queries("shop", "orders", shapes, m, 10, out, sample_every);
  return out;
}

std::vector<Finding> redundant(const CollectionMetadata& m) {
  std::vector<Finding> out;
  detect_redundant_indexes("shop", "orders", m, out);
  return out;
}

std::vector<Finding> unused(const CollectionMetadata& m) {
  std::vector<Finding> out;
  detect_unused_indexes("shop", "orders", m, out);
  return out;
}

TEST(UnindexedQueryDetector, SuggestsTheIndexInEqualitySortRangeOrder) {
  QueryShapeCounter shapes(16);
  shapes.record(shape_of(R"({"a": 1, "b": {"$gt": 2}})", R"({"c": -1})"), 12);
  const CollectionMetadata m = metadata_with_indexes("shop", "orders", {{"x"}});
  auto findings = unindexed(shapes, m);
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings.front();
  EXPECT_EQ(f.kind, Finding::Kind::kUnindexedQuery);
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_EQ(f.field, "a");
  EXPECT_EQ(f.source, "traffic");
  EXPECT_NE(f.suggestion.find("db.orders.createIndex({a: 1, c: -1, b: 1})"), std::string::npos)
      << f.suggestion;
  EXPECT_NE(f.evidence.find("`eq: a; sort: c:-1; range: b` ran 12 times"), std::string::npos)
      << f.evidence;
  findings = unindexed(shapes, m, 8);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings.front().evidence.find("1 in 8, so about 96"), std::string::npos)
      << findings.front().evidence;
}

TEST(UnindexedQueryDetector, QuietWhenAnIndexLeadsWithAnEqualityFieldOrTheShapeIsRare) {
  QueryShapeCounter shapes(16);
  shapes.record(shape_of(R"({"a": 1, "b": {"$gt": 2}})", R"({"c": -1})"), 12);
  shapes.record(shape_of(R"({"rare": 1})", R"({})"), 9);
  EXPECT_TRUE(unindexed(shapes, metadata_with_indexes("shop", "orders", {{"a", "z"}})).empty());
  EXPECT_EQ(count_kind(unindexed(shapes, metadata_with_indexes("shop", "orders", {})),
                       Finding::Kind::kUnindexedQuery, "rare"),
            0);
}

TEST(UnindexedQueryDetector, NothingWhileTheIndexListIsUnknown) {
  QueryShapeCounter shapes(16);
  shapes.record(shape_of(R"({"a": 1})", R"({})"), 100);
  CollectionMetadata m = metadata_with_indexes("shop", "orders", {});
  m.indexes_known = false;
  m.unknown.push_back("indexes: not authorized (code 13)");
  EXPECT_TRUE(unindexed(shapes, m).empty());
  m.indexes_known = true;
  m.known = false;
  EXPECT_TRUE(unindexed(shapes, m).empty());
  m.known = true;
  EXPECT_EQ(unindexed(shapes, m).size(), 1u);
}

TEST(UnindexedQueryDetector, TextAndNearQueriesRanOnTheirOwnIndexOrHedgeForOr) {
  QueryShapeCounter shapes(16);
  shapes.record(shape_of(R"({"$text": {"$search": "x"}, "lang": "en"})", R"({})"), 50);
  shapes.record(shape_of(R"({"$or": [{"x": 1}, {"y": 1}], "tenant": 1})", R"({})"), 50);
  const auto findings = unindexed(shapes, metadata_with_indexes("shop", "orders", {}));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings.front().field, "tenant");
  EXPECT_EQ(findings.front().suggestion.rfind("Unless every $or clause has an index", 0), 0u)
      << findings.front().suggestion;
}

TEST(UnindexedQueryDetector, AShapeWhoseIndexLeadsAnotherFoldsIntoIt) {
  QueryShapeCounter shapes(16);
  shapes.record(shape_of(R"({"a": 1})", R"({})"), 15);
  shapes.record(shape_of(R"({"a": 1, "b": {"$lt": 3}})", R"({})"), 20);
  shapes.record(shape_of(R"({"q": 1})", R"({})"), 10);
  const auto findings = unindexed(shapes, metadata_with_indexes("shop", "orders", {}));
  ASSERT_EQ(findings.size(), 2u);
  ASSERT_EQ(count_kind(findings, Finding::Kind::kUnindexedQuery, "a"), 1);
  const Finding& f = findings.front().field == "a" ? findings.front() : findings.back();
  EXPECT_NE(f.suggestion.find("createIndex({a: 1, b: 1})"), std::string::npos) << f.suggestion;
  EXPECT_NE(f.evidence.find("serves `eq: a` (15)"), std::string::npos) << f.evidence;
}

TEST(RedundantIndexDetector, FlagsAnIndexThatLeadsAnother) {
  CollectionMetadata m = metadata_with_indexes("shop", "orders", {{"a"}, {"a", "b"}});
  auto findings = redundant(m);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings.front().kind, Finding::Kind::kRedundantIndex);
  EXPECT_EQ(findings.front().field, "a");
  EXPECT_NE(findings.front().evidence.find("`a_1` {a: 1}"), std::string::npos);
  EXPECT_NE(findings.front().suggestion.find("db.orders.dropIndex(\"a_1\")"), std::string::npos);
  // All keys reversed lead too: the longer index is walked backwards.
  m = metadata_with_indexes("shop", "orders", {});
  add_index(m, {{"a", "-1"}, {"b", "1"}});
  add_index(m, {{"a", "1"}, {"b", "-1"}, {"c", "1"}});
  EXPECT_EQ(redundant(m).size(), 1u);
  // Mixed directions do not.
  m = metadata_with_indexes("shop", "orders", {});
  add_index(m, {{"a", "1"}, {"b", "1"}});
  add_index(m, {{"a", "1"}, {"b", "-1"}, {"c", "1"}});
  EXPECT_TRUE(redundant(m).empty());
}

TEST(RedundantIndexDetector, KeepsIndexesWithAPurposeOfTheirOwn) {
  for (int option = 0; option < 4; ++option) {
    CollectionMetadata m = metadata_with_indexes("shop", "orders", {{"a", "b"}});
    IndexSpec& shorter = add_index(m, {{"a", "1"}});
    if (option == 0) shorter.unique = true;
    if (option == 1) shorter.expire_after_seconds = 3600;
    if (option == 2) shorter.partial = true;
    if (option == 3) shorter.collation = true;
    EXPECT_TRUE(redundant(m).empty()) << option;
  }
  // The longer index holds only some documents, or skips those without a geo field.
  CollectionMetadata m = metadata_with_indexes("shop", "orders", {{"a"}});
  add_index(m, {{"a", "1"}, {"b", "1"}}).sparse = true;
  EXPECT_TRUE(redundant(m).empty());
  m = metadata_with_indexes("shop", "orders", {{"a"}});
  add_index(m, {{"a", "1"}, {"loc", "2dsphere"}});
  EXPECT_TRUE(redundant(m).empty());
  // Never the _id index, and nothing while the list is unknown.
  m = metadata_with_indexes("shop", "orders", {});
  add_index(m, {{"_id", "1"}, {"t", "1"}});
  EXPECT_TRUE(redundant(m).empty());
  m = metadata_with_indexes("shop", "orders", {{"a"}, {"a", "b"}});
  m.indexes_known = false;
  EXPECT_TRUE(redundant(m).empty());
}

TEST(UnusedIndexDetector, FlagsZeroAccessesOnlyWhenUsageIsKnown) {
  CollectionMetadata m = metadata_with_indexes("shop", "orders", {});
  m.source = "cluster";
  m.index_usage_known = true;
  m.indexes.front().accesses = 0;  // _id
  add_index(m, {{"status", "1"}}).accesses = 0;
  add_index(m, {{"used", "1"}}).accesses = 42;
  IndexSpec& unique = add_index(m, {{"email", "1"}});
  unique.unique = true;
  unique.accesses = 0;
  IndexSpec& ttl = add_index(m, {{"expires", "1"}});
  ttl.expire_after_seconds = 0;
  ttl.accesses = 0;
  add_index(m, {{"unread", "1"}});  // no $indexStats row: unknown, not 0
  auto findings = unused(m);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings.front().kind, Finding::Kind::kUnusedIndex);
  EXPECT_EQ(findings.front().field, "status");
  EXPECT_EQ(findings.front().source, "metadata");
  EXPECT_NE(findings.front().evidence.find("since the server last started"), std::string::npos);
  m.index_usage_known = false;
  EXPECT_TRUE(unused(m).empty());
}

TEST(TooManyIndexesDetector, NothingWhileTheIndexListIsUnknown) {
  std::vector<std::vector<std::string>> keys;
  for (int i = 0; i < 12; ++i) keys.push_back({"f" + std::to_string(i)});
  CollectionMetadata m = metadata_with_indexes("shop", "wide", keys);
  m.indexes_known = false;
  CollectionProfile p("shop", "wide", kSettings);
  p.set_metadata(m);
  EXPECT_EQ(count_kind(run_offline_detectors({&p}, kSettings), Finding::Kind::kTooManyIndexes), 0);
  m.indexes_known = true;
  m.source = "cluster";
  p.set_metadata(m);
  const auto findings = run_offline_detectors({&p}, kSettings);
  ASSERT_EQ(count_kind(findings, Finding::Kind::kTooManyIndexes), 1);
  for (const Finding& f : findings) {
    if (f.kind == Finding::Kind::kTooManyIndexes) {
      EXPECT_EQ(f.source, "metadata");
    }
  }
}

TEST(OfflineIndexDetectors, ReadIndexOptionsFromADumpsMetadata) {
  CollectionMetadata m;
  ASSERT_TRUE(parse_metadata_json(
      R"({"indexes": [{"v": 2, "key": {"_id": 1}, "name": "_id_"},
          {"v": 2, "key": {"email": 1}, "name": "email_1", "unique": true},
          {"v": 2, "key": {"email": 1, "at": -1}, "name": "email_1_at_-1"},
          {"v": 2, "key": {"sku": 1}, "name": "sku_1", "expireAfterSeconds": 60},
          {"v": 2, "key": {"sku": 1, "n": 1}, "name": "sku_1_n_1"},
          {"v": 2, "key": {"k": 1}, "name": "k_1"},
          {"v": 2, "key": {"k": 1, "n": 1}, "name": "k_1_n_1"}],
          "options": {}, "collectionName": "users"})",
      &m));
  EXPECT_TRUE(m.indexes[1].unique);
  EXPECT_EQ(m.indexes[3].expire_after_seconds, 60);
  CollectionProfile p("shop", "users", kSettings);
  p.set_metadata(m);
  const auto findings = run_offline_detectors({&p}, kSettings);
  ASSERT_EQ(count_kind(findings, Finding::Kind::kRedundantIndex), 1);
  EXPECT_EQ(count_kind(findings, Finding::Kind::kRedundantIndex, "k"), 1);
  for (const Finding& f : findings) {
    if (f.kind == Finding::Kind::kRedundantIndex) {
      EXPECT_EQ(f.source, "dump");
    }
  }
}

// One collection per profile, each with `documents` documents {_id, name, total}.
struct Collections {
  std::vector<std::unique_ptr<CollectionProfile>> owned;
  std::vector<const CollectionProfile*> profiles;

  void add(const std::string& db, const std::string& name, int documents, bool extra = false,
           const AdvisorSettings& settings = kSettings) {
    owned.push_back(std::make_unique<CollectionProfile>(db, name, settings));
    for (int i = 0; i < documents; ++i) {
      bson_t* doc = bson_new();
      BSON_APPEND_INT32(doc, "_id", i);
      BSON_APPEND_UTF8(doc, "name", "x");
      BSON_APPEND_DOUBLE(doc, extra ? "price" : "total", 1.5);
      feed(*owned.back(), doc);
    }
    profiles.push_back(owned.back().get());
  }
};

TEST(SameShapeCollectionsDetector, FlagsTwelveCollectionsWithOneShape) {
  Collections c;
  for (int day = 1; day <= 12; ++day) {
    c.add("logs", "events_202401" + std::string(day < 10 ? "0" : "") + std::to_string(day), 3);
  }
  c.add("logs", "other", 3, true);
  const auto findings = run_offline_detectors(c.profiles, kSettings);
  ASSERT_EQ(count_kind(findings, Finding::Kind::kSameShapeCollections), 1);
  for (const Finding& f : findings) {
    if (f.kind != Finding::Kind::kSameShapeCollections) continue;
    EXPECT_EQ(f.db, "logs");
    EXPECT_TRUE(f.collection.empty());
    EXPECT_NE(f.evidence.find("12 collections in `logs`"), std::string::npos) << f.evidence;
    EXPECT_NE(f.evidence.find("{_id, name, total}"), std::string::npos) << f.evidence;
    EXPECT_NE(f.evidence.find("a date after `events`"), std::string::npos) << f.evidence;
    EXPECT_NE(f.suggestion.find("collection `events`"), std::string::npos) << f.suggestion;
  }
}

TEST(SameShapeCollectionsDetector, QuietBelowTheThresholdAcrossDatabasesAndWhenEmpty) {
  Collections c;
  for (int i = 0; i < 9; ++i) c.add("a", "t" + std::to_string(i), 2);
  for (int i = 0; i < 9; ++i) c.add("b", "t" + std::to_string(i), 2);
  for (int i = 0; i < 12; ++i) c.add("e", "empty" + std::to_string(i), 0);
  EXPECT_EQ(count_kind(run_offline_detectors(c.profiles, kSettings),
                       Finding::Kind::kSameShapeCollections),
            0);
}

TEST(TooManyCollectionsDetector, CountsTheWholeDeploymentToo) {
  AdvisorSettings settings;
  settings.collections_cluster_warn = 5;
  settings.same_shape_min_collections = 100;
  Collections c;
  for (int db = 0; db < 3; ++db) {
    for (int i = 0; i < 2; ++i) c.add("db" + std::to_string(db), "c" + std::to_string(i), 0);
  }
  auto findings = run_offline_detectors(c.profiles, settings);
  ASSERT_EQ(count_kind(findings, Finding::Kind::kTooManyCollections), 1);
  EXPECT_TRUE(findings.front().db.empty());
  EXPECT_NE(findings.front().evidence.find("6 collections in 3 databases"), std::string::npos)
      << findings.front().evidence;
  c.profiles.pop_back();
  EXPECT_EQ(
      count_kind(run_offline_detectors(c.profiles, settings), Finding::Kind::kTooManyCollections),
      0);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::advisor
