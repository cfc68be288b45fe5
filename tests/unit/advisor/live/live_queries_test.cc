// The live advisor's index findings: query shapes counted from traffic against the indexes known
// from catalog replies, the cluster or createIndexes traffic; redundant and unused indexes and
// collections of one shape from what docguard read of the cluster.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "docguard/advisor/live_advisor.h"
#include "test_messages.h"

namespace docguard::advisor {
namespace {
namespace DOCGUARD_UNITY_ID {

using testing::request;

constexpr const char* kFrequentQuery =
    R"({"find": "orders", "$db": "app", "sort": {"price": -1},
        "filter": {"status": "a", "createdAt": {"$gt": {"$date": "2024-01-01T00:00:00Z"}}}})";
constexpr const char* kIdIndex = R"({"v": 2, "key": {"_id": 1}, "name": "_id_"})";

AdvisorSettings every_command() {
  AdvisorSettings s;
  s.live_sample_every = 1;
  s.report_missing_validator = false;
  return s;
}

IndexSpec index_on(std::string name, std::vector<std::pair<std::string, std::string>> keys,
                   std::optional<uint64_t> accesses = std::nullopt) {
  IndexSpec index;
  index.name = std::move(name);
  index.keys = std::move(keys);
  index.accesses = accesses;
  return index;
}

// A collection as an introspection pass reads it: metadata from the cluster, sampled documents.
std::unique_ptr<CollectionProfile> cluster_collection(const std::string& db,
                                                      const std::string& coll,
                                                      std::vector<IndexSpec> indexes,
                                                      const std::vector<std::string>& documents,
                                                      const AdvisorSettings& s) {
  auto profile = std::make_unique<CollectionProfile>(db, coll, s);
  CollectionMetadata m;
  m.db = db;
  m.collection = coll;
  m.known = true;
  m.type = "collection";
  m.indexes_known = true;
  m.indexes = std::move(indexes);
  m.source = "cluster";
  m.sample_method = "$sample";
  profile->set_metadata(m);
  for (const std::string& json : documents) {
    const testing::Bson doc(json);
    EXPECT_TRUE(profile->add_document(doc.view().data, doc.view().size));
  }
  return profile;
}

class LiveQueriesTest : public ::testing::Test {
 protected:
  explicit LiveQueriesTest(AdvisorSettings s = every_command()) : settings(s), advisor(s) {}

  void send(const std::string& coll, const std::string& body, int times = 1) {
    for (int i = 0; i < times; ++i) {
      auto m = request(body);
      advisor.on_request("app", coll, m->cmd, "");
    }
  }
  // A catalog command with the upstream's reply to it (`reply_json`, {ok: 1} by default).
  void catalog(const std::string& body, const std::string& reply_json = R"({"ok": 1})") {
    auto m = request(body);
    const testing::Bson reply(reply_json);
    advisor.on_catalog_reply(m->cmd, reply.view());
  }
  void list_indexes(const std::string& coll, const std::string& indexes_json) {
    catalog(R"({"listIndexes": ")" + coll + R"(", "$db": "app"})",
            R"({"cursor": {"id": 0, "ns": "app.)" + coll + R"(", "firstBatch": )" + indexes_json +
                R"(}, "ok": 1})");
  }
  void create_index(const std::string& coll, const std::string& keys_json) {
    catalog(R"({"createIndexes": ")" + coll + R"(", "$db": "app", "indexes": [{"key": )" +
            keys_json + R"(, "name": "i"}]})");
  }
  std::vector<Finding> of(const std::string& coll, Finding::Kind kind) const {
    std::vector<Finding> out;
    for (Finding& f : advisor.findings()) {
      if (f.collection == coll && f.kind == kind) out.push_back(std::move(f));
    }
    return out;
  }

  AdvisorSettings settings;
  LiveAdvisor advisor;
};

TEST_F(LiveQueriesTest, FrequentShapeOnAnUnindexedCollectionGetsItsIndexInEsrOrder) {
  list_indexes("orders", std::string("[") + kIdIndex + "]");
  list_indexes("carts", std::string("[") + kIdIndex + "]");
  send("orders", kFrequentQuery, 12);
  send("carts", R"({"find": "carts", "$db": "app", "filter": {"status": "a"}})", 9);
  const auto found = of("orders", Finding::Kind::kUnindexedQuery);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].field, "status");
  EXPECT_EQ(found[0].source, "traffic");
  EXPECT_NE(found[0].suggestion.find("db.orders.createIndex({status: 1, price: -1, createdAt: 1})"),
            std::string::npos)
      << found[0].suggestion;
  EXPECT_NE(found[0].evidence.find("ran 12 times"), std::string::npos) << found[0].evidence;
  EXPECT_EQ(found[0].evidence.find("createIndexes traffic"), std::string::npos);
  EXPECT_TRUE(of("carts", Finding::Kind::kUnindexedQuery).empty());  // below unindexed_query_min
}

TEST_F(LiveQueriesTest, AnIndexOnTheEqualityFieldServesTheShape) {
  list_indexes("orders", std::string("[") + kIdIndex +
                             R"(, {"v": 2, "key": {"status": 1}, "name": "status_1"}])");
  send("orders", kFrequentQuery, 12);
  EXPECT_TRUE(of("orders", Finding::Kind::kUnindexedQuery).empty());

  // An index created through docguard counts at once.
  list_indexes("carts", std::string("[") + kIdIndex + "]");
  send("carts", R"({"find": "carts", "$db": "app", "filter": {"owner": 1}})", 12);
  EXPECT_EQ(of("carts", Finding::Kind::kUnindexedQuery).size(), 1u);
  create_index("carts", R"({"owner": 1, "at": -1})");
  EXPECT_TRUE(of("carts", Finding::Kind::kUnindexedQuery).empty());
}

TEST_F(LiveQueriesTest, WithClusterFactsExpectedNothingIsJudgedUntilTheyCome) {
  advisor.expect_cluster_facts(true);
  send("orders", kFrequentQuery, 12);
  EXPECT_TRUE(of("orders", Finding::Kind::kUnindexedQuery).empty());
  advisor.on_cluster_collection(
      cluster_collection("app", "orders", {index_on("_id_", {{"_id", "1"}})}, {}, settings), 1);
  const auto found = of("orders", Finding::Kind::kUnindexedQuery);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].evidence.find("(1 index)"), std::string::npos) << found[0].evidence;
}

TEST_F(LiveQueriesTest, WithoutClusterFactsTheIndexesSeenInTrafficAreTheList) {
  send("orders", kFrequentQuery, 12);
  send("orders", R"({"find": "orders", "$db": "app", "filter": {"_id": 7}})", 12);
  const auto found = of("orders", Finding::Kind::kUnindexedQuery);
  ASSERT_EQ(found.size(), 1u);  // not the finds by _id: every collection has that index
  EXPECT_EQ(found[0].field, "status");
  EXPECT_NE(found[0].evidence.find("only those seen in createIndexes traffic"), std::string::npos)
      << found[0].evidence;
  create_index("orders", R"({"status": 1})");
  EXPECT_TRUE(of("orders", Finding::Kind::kUnindexedQuery).empty());
}

TEST_F(LiveQueriesTest, EveryQueryCommandCountsItsShape) {
  send("events", R"({"aggregate": "events", "$db": "app", "cursor": {},
                     "pipeline": [{"$match": {"region": "eu"}}, {"$sort": {"day": 1}},
                                  {"$group": {"_id": "$kind"}}]})",
       12);
  send("stock", R"({"count": "stock", "$db": "app", "query": {"sku": "x"}})", 12);
  send("tags", R"({"distinct": "tags", "$db": "app", "key": "name", "query": {"tag": "t"}})", 12);
  send("jobs", R"({"findAndModify": "jobs", "$db": "app", "query": {"state": "new"},
                   "sort": {"at": 1}, "update": {"$set": {"state": "run"}}})",
       12);
  send("accounts", R"({"update": "accounts", "$db": "app",
                       "updates": [{"q": {"owner": 1}, "u": {"$set": {"x": 1}}}]})",
       12);
  send("sessions", R"({"delete": "sessions", "$db": "app",
                       "deletes": [{"q": {"expiresAt": {"$lt": 5}}, "limit": 0}]})",
       12);
  const std::pair<const char*, const char*> expected[] = {{"events", "{region: 1, day: 1}"},
                                                          {"stock", "{sku: 1}"},
                                                          {"tags", "{tag: 1}"},
                                                          {"jobs", "{state: 1, at: 1}"},
                                                          {"accounts", "{owner: 1}"},
                                                          {"sessions", "{expiresAt: 1}"}};
  for (const auto& [coll, keys] : expected) {
    const auto found = of(coll, Finding::Kind::kUnindexedQuery);
    ASSERT_EQ(found.size(), 1u) << coll;
    EXPECT_NE(found[0].suggestion.find(std::string("createIndex(") + keys + ")"), std::string::npos)
        << found[0].suggestion;
  }
}

class LiveQueryBoundsTest : public LiveQueriesTest {
 protected:
  static AdvisorSettings bounded() {
    AdvisorSettings s = every_command();
    s.unindexed_query_min = 16;
    s.query_shapes_per_collection = 1;
    return s;
  }
  LiveQueryBoundsTest() : LiveQueriesTest(bounded()) {}
};

TEST_F(LiveQueryBoundsTest, ABatchCountsItsFirstStatementsAndShapesPastTheBoundAreNot) {
  std::string updates;
  for (int i = 0; i < 40; ++i) {
    updates += std::string(i ? ", " : "") + R"({"q": {"owner": 1}, "u": {"$set": {"x": 1}}})";
  }
  send("accounts", R"({"update": "accounts", "$db": "app", "updates": [)" + updates + "]}");
  const auto found = of("accounts", Finding::Kind::kUnindexedQuery);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].evidence.find("ran 16 times"), std::string::npos) << found[0].evidence;

  // The collection's one shape slot is taken: a second shape is not counted at all.
  send("accounts", R"({"find": "accounts", "$db": "app", "filter": {"region": "eu"}})", 20);
  EXPECT_EQ(of("accounts", Finding::Kind::kUnindexedQuery).size(), 1u);
}

class LiveSampledQueriesTest : public LiveQueriesTest {
 protected:
  static AdvisorSettings one_in_four() {
    AdvisorSettings s = every_command();
    s.live_sample_every = 4;
    return s;
  }
  LiveSampledQueriesTest() : LiveQueriesTest(one_in_four()) {}
};

TEST_F(LiveSampledQueriesTest, EvidenceSaysHowManyQueriesThatIsInAll) {
  send("orders", kFrequentQuery, 48);
  const auto found = of("orders", Finding::Kind::kUnindexedQuery);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].evidence.find("1 in 4, so about 48"), std::string::npos) << found[0].evidence;
}

TEST_F(LiveQueriesTest, AFrequentShapeReplacesTheReferenceFindingOnItsFields) {
  send("orders", R"({"find": "orders", "$db": "app", "filter": {"customerId": 5, "paid": 1}})", 12);
  send("orders", R"({"find": "orders", "$db": "app", "filter": {"invoiceId": 3}})", 12);
  // A join on invoiceId from another collection keeps its own finding.
  send("invoices", R"({"aggregate": "invoices", "$db": "app", "cursor": {}, "pipeline": [
           {"$lookup": {"from": "orders", "localField": "_id", "foreignField": "invoiceId",
                        "as": "o"}}]})",
       12);
  const auto queries = of("orders", Finding::Kind::kUnindexedQuery);
  ASSERT_EQ(queries.size(), 2u);
  EXPECT_EQ(queries[0].field, "customerId");
  EXPECT_EQ(queries[1].field, "invoiceId");
  const auto references = of("orders", Finding::Kind::kUnindexedReference);
  ASSERT_EQ(references.size(), 1u);
  EXPECT_EQ(references[0].field, "invoiceId");
  EXPECT_EQ(references[0].evidence.rfind("$lookup from `invoices`", 0), 0u)
      << references[0].evidence;
}

TEST_F(LiveQueriesTest, RedundantAndUnusedIndexesFromTheClusterIndexList) {
  auto stored = cluster_collection(
      "app", "orders",
      {index_on("_id_", {{"_id", "1"}}, 9), index_on("status_1", {{"status", "1"}}, 4),
       index_on("status_1_price_-1", {{"status", "1"}, {"price", "-1"}}, 7),
       index_on("legacy_1", {{"legacy", "1"}}, 0)},
      {}, settings);
  CollectionMetadata m = stored->metadata();
  m.index_usage_known = true;
  stored->set_metadata(m);
  advisor.on_cluster_collection(std::move(stored), 1);
  const auto redundant = of("orders", Finding::Kind::kRedundantIndex);
  ASSERT_EQ(redundant.size(), 1u);
  EXPECT_EQ(redundant[0].field, "status");
  EXPECT_EQ(redundant[0].source, "metadata");
  const auto unused = of("orders", Finding::Kind::kUnusedIndex);
  ASSERT_EQ(unused.size(), 1u);
  EXPECT_EQ(unused[0].field, "legacy");
  EXPECT_EQ(unused[0].source, "metadata");

  // Indexes seen in traffic alone may not be the whole list: no redundancy is judged on them.
  create_index("carts", R"({"owner": 1})");
  create_index("carts", R"({"owner": 1, "at": 1})");
  EXPECT_TRUE(of("carts", Finding::Kind::kRedundantIndex).empty());
}

class LiveCollectionsTest : public LiveQueriesTest {
 protected:
  static AdvisorSettings few() {
    AdvisorSettings s = every_command();
    s.same_shape_min_collections = 3;
    s.collections_warn = 3;
    s.collections_cluster_warn = 3;
    return s;
  }
  LiveCollectionsTest() : LiveQueriesTest(few()) {}
};

TEST_F(LiveCollectionsTest, CollectionsOfOneShapeAmongTheOnesReadFromTheCluster) {
  for (int i = 1; i <= 4; ++i) {
    advisor.on_cluster_collection(
        cluster_collection(
            "tenants", "t" + std::to_string(i), {index_on("_id_", {{"_id", "1"}})},
            {R"({"_id": 1, "name": "a", "plan": "x"})", R"({"_id": 2, "name": "b", "plan": "y"})"},
            settings),
        1);
  }
  // Collections seen only in traffic are not counted.
  for (int i = 1; i <= 4; ++i) {
    const std::string coll = "c" + std::to_string(i);
    send(coll, R"({"insert": ")" + coll + R"(", "$db": "app", "documents": [{"a": 1}]})");
  }
  const auto findings = advisor.findings();
  auto count = [&](const std::string& db, Finding::Kind kind) {
    return std::count_if(findings.begin(), findings.end(), [&](const Finding& f) {
      return f.db == db && f.collection.empty() && f.kind == kind && f.source == "metadata";
    });
  };
  EXPECT_EQ(count("tenants", Finding::Kind::kSameShapeCollections), 1);
  EXPECT_EQ(count("tenants", Finding::Kind::kTooManyCollections), 1);
  EXPECT_EQ(count("", Finding::Kind::kTooManyCollections), 1);  // the deployment: 4 > 3
  EXPECT_EQ(count("app", Finding::Kind::kTooManyCollections), 0);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::advisor
