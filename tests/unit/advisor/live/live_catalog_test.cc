// What the live advisor knows of the catalog: catalog replies seen in traffic change it at once,
// introspection passes replace it, facts that are not known are never taken as absent, and the
// facts a fleet shares read back as written.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "docguard/advisor/live_advisor.h"
#include "docguard/advisor/shared_facts.h"
#include "test_messages.h"

namespace docguard::advisor {
namespace {
namespace DOCGUARD_UNITY_ID {

using testing::Bson;
using testing::request;

AdvisorSettings every_command() {
  AdvisorSettings s;
  s.live_sample_every = 1;
  return s;
}

// The command as the conversation hands it over with a successful reply.
void catalog(LiveAdvisor& live, const std::string& command,
             const std::string& reply = "{\"ok\": 1}") {
  auto m = request(command);
  const Bson r(reply);
  live.on_catalog_reply(m->cmd, r.view());
}

const LiveAdvisor::CollectionFacts* facts_of(const std::vector<LiveAdvisor::CollectionFacts>& all,
                                             const std::string& ns) {
  for (const auto& f : all) {
    if (f.metadata.db + "." + f.metadata.collection == ns) return &f;
  }
  return nullptr;
}

std::vector<std::string> index_names(const LiveAdvisor& live, const std::string& ns) {
  const auto all = live.collection_facts();
  const auto* f = facts_of(all, ns);
  std::vector<std::string> names;
  if (f == nullptr) return names;
  for (const IndexSpec& i : f->metadata.indexes) names.push_back(i.name);
  return names;
}

bool has_finding(const LiveAdvisor& live, Finding::Kind kind) {
  const auto found = live.findings();
  return std::any_of(found.begin(), found.end(), [&](const Finding& f) { return f.kind == kind; });
}

TEST(LiveCatalogTest, IndexCommandsChangeTheKnownIndexesAtOnce) {
  LiveAdvisor live(every_command());
  catalog(live, R"({"create": "orders", "$db": "app"})");
  EXPECT_EQ(index_names(live, "app.orders"), std::vector<std::string>{"_id_"});
  catalog(live, R"({"createIndexes": "orders", "$db": "app", "indexes": [
                    {"key": {"customerId": 1}, "name": "customerId_1", "unique": true},
                    {"key": {"ts": 1}, "name": "ts_ttl", "expireAfterSeconds": 60}]})");
  EXPECT_EQ(index_names(live, "app.orders"),
            (std::vector<std::string>{"_id_", "customerId_1", "ts_ttl"}));
  const auto all = live.collection_facts();
  const auto& indexes = facts_of(all, "app.orders")->metadata.indexes;
  EXPECT_TRUE(indexes[1].unique);
  EXPECT_EQ(indexes[2].expire_after_seconds, 60);
  catalog(live, R"({"dropIndexes": "orders", "$db": "app", "index": "customerId_1"})");
  EXPECT_EQ(index_names(live, "app.orders"), (std::vector<std::string>{"_id_", "ts_ttl"}));
  catalog(live, R"({"dropIndexes": "orders", "$db": "app", "index": {"ts": 1}})");
  EXPECT_EQ(index_names(live, "app.orders"), std::vector<std::string>{"_id_"});
  catalog(live, R"({"listIndexes": "orders", "$db": "app"})",
          R"({"ok": 1, "cursor": {"id": 0, "ns": "app.orders", "firstBatch": [
               {"v": 2, "key": {"_id": 1}, "name": "_id_"},
               {"v": 2, "key": {"sku": 1, "at": -1}, "name": "sku_1_at_-1"}]}})");
  EXPECT_EQ(index_names(live, "app.orders"), (std::vector<std::string>{"_id_", "sku_1_at_-1"}));
  catalog(live, R"({"drop": "orders", "$db": "app"})");
  EXPECT_EQ(facts_of(live.collection_facts(), "app.orders"), nullptr);
}

TEST(LiveCatalogTest, AValidatorThatOnlyWarnsIsAFinding) {
  LiveAdvisor live(every_command());
  catalog(live, R"({"create": "events", "$db": "app", "validator": {"a": {"$exists": true}},
                    "validationAction": "warn"})");
  EXPECT_TRUE(has_finding(live, Finding::Kind::kValidatorNotEnforced));
  EXPECT_FALSE(has_finding(live, Finding::Kind::kNoValidator));
  catalog(live, R"({"collMod": "events", "$db": "app", "validationAction": "error"})");
  EXPECT_FALSE(has_finding(live, Finding::Kind::kValidatorNotEnforced));
  catalog(live, R"({"collMod": "events", "$db": "app", "validator": {}})");
  auto insert = request(R"({"insert": "events", "$db": "app", "documents": [{"_id": 1}]})");
  live.on_request("app", "events", insert->cmd, "");
  EXPECT_TRUE(has_finding(live, Finding::Kind::kNoValidator));
}

TEST(LiveCatalogTest, ListCollectionsRepliesGiveEachCollectionsOptions) {
  LiveAdvisor live(every_command());
  catalog(live, R"({"listCollections": 1, "$db": "app"})",
          R"({"ok": 1, "cursor": {"id": 0, "ns": "app.$cmd.listCollections", "firstBatch": [
               {"name": "a", "type": "collection", "options": {"validator": {"x": 1},
                "validationLevel": "off"}},
               {"name": "v", "type": "view", "options": {"viewOn": "a", "pipeline": []}}]}})");
  const auto all = live.collection_facts();
  ASSERT_NE(facts_of(all, "app.a"), nullptr);
  EXPECT_TRUE(facts_of(all, "app.a")->metadata.has_validator);
  EXPECT_EQ(facts_of(all, "app.a")->metadata.validation_level, "off");
  EXPECT_EQ(facts_of(all, "app.v")->metadata.type, "view");
  EXPECT_TRUE(has_finding(live, Finding::Kind::kValidatorNotEnforced));
}

TEST(LiveCatalogTest, RenameMovesTheFacts) {
  LiveAdvisor live(every_command());
  catalog(live, R"({"create": "old", "$db": "app"})");
  catalog(live, R"({"renameCollection": "app.old", "to": "app.new", "$db": "admin"})");
  const auto all = live.collection_facts();
  EXPECT_EQ(facts_of(all, "app.old"), nullptr);
  ASSERT_NE(facts_of(all, "app.new"), nullptr);
  EXPECT_TRUE(facts_of(all, "app.new")->metadata.known);
}

// The advisor remembers the namespace traffic met last: a drop, a rename or a dropDatabase
// forgets it, so the next command on that namespace starts from nothing (and touches no
// namespace that was erased).
TEST(LiveCatalogTest, TrafficAfterADropStartsAFreshNamespace) {
  LiveAdvisor live(every_command());
  auto insert = request(R"({"insert": "orders", "$db": "app", "documents": [{"_id": 1}]})");
  live.on_request("app", "orders", insert->cmd, "");
  catalog(live, R"({"createIndexes": "orders", "$db": "app", "indexes": [
                    {"key": {"sku": 1}, "name": "sku_1"}]})");
  EXPECT_EQ(index_names(live, "app.orders"), std::vector<std::string>{"sku_1"});
  for (const char* erase : {R"({"drop": "orders", "$db": "app"})",
                            R"({"renameCollection": "app.orders", "to": "app.kept",
                                "$db": "admin"})",
                            R"({"dropDatabase": 1, "$db": "app"})"}) {
    live.on_request("app", "orders", insert->cmd, "");
    catalog(live, erase);
    EXPECT_EQ(facts_of(live.collection_facts(), "app.orders"), nullptr) << erase;
    live.on_request("app", "orders", insert->cmd, "");
    const auto all = live.collection_facts();
    const auto* fresh = facts_of(all, "app.orders");
    ASSERT_NE(fresh, nullptr) << erase;
    EXPECT_TRUE(index_names(live, "app.orders").empty()) << erase;
  }
}

TEST(LiveCatalogTest, UnknownFactsAreNamedNotGuessedAndReadOnce) {
  LiveAdvisor live(every_command());
  live.expect_cluster_facts(true);
  auto insert = request(R"({"insert": "orders", "$db": "app", "documents": [{"_id": 1}]})");
  live.on_request("app", "orders", insert->cmd, "");
  EXPECT_FALSE(has_finding(live, Finding::Kind::kNoValidator));
  EXPECT_NE(live.render(ReportFormat::kJson).find("not read from the cluster yet"),
            std::string::npos);
  const auto unread = live.take_unread_namespaces(10);
  ASSERT_EQ(unread.size(), 1u);
  EXPECT_EQ(unread[0].first, "app");
  EXPECT_EQ(unread[0].second, "orders");
  EXPECT_TRUE(live.take_unread_namespaces(10).empty());  // handed out once

  auto stored = std::make_unique<CollectionProfile>("app", "orders", every_command());
  CollectionMetadata m;
  m.db = "app";
  m.collection = "orders";
  m.known = true;
  m.type = "collection";
  m.source = "cluster";
  m.indexes.push_back(IndexSpec{.name = "_id_", .keys = {{"_id", "1"}}});
  m.unknown.push_back("index usage: not authorized (code 13)");
  stored->set_metadata(m);
  live.on_cluster_collection(std::move(stored), 1.0e9);
  EXPECT_TRUE(live.has_cluster_facts("app", "orders"));
  EXPECT_TRUE(has_finding(live, Finding::Kind::kNoValidator));
  EXPECT_NE(
      live.render(ReportFormat::kJson).find("app.orders: index usage: not authorized (code 13)"),
      std::string::npos);
  // A later pass that no longer finds it: the collection is gone.
  live.on_cluster_pass({"app"}, {});
  EXPECT_EQ(facts_of(live.collection_facts(), "app.orders"), nullptr);
}

TEST(SharedFactsTest, WhatIsWrittenReadsBack) {
  SharedCollection shared;
  shared.metadata.db = "shop";
  shared.metadata.collection = "orders";
  shared.metadata.known = true;
  shared.metadata.type = "collection";
  shared.metadata.source = "cluster";
  shared.metadata.sample_method = "find";
  shared.metadata.has_validator = true;
  shared.metadata.validation_action = "warn";
  shared.metadata.stats.known = true;
  shared.metadata.stats.documents = 2000;
  IndexSpec index;
  index.name = "customerId_1";
  index.keys = {{"customerId", "1"}, {"items.sku", "-1"}};
  index.unique = true;
  index.expire_after_seconds = 30;
  index.accesses = 0;
  shared.metadata.indexes.push_back(index);
  shared.metadata.unknown.push_back("index usage: not supported");
  Finding f;
  f.db = "shop";
  f.collection = "orders";
  f.kind = Finding::Kind::kLargeArray;
  f.severity = Severity::kWarn;
  f.field = "items";
  f.evidence = "300 elements";
  f.source = "sample";
  shared.findings.push_back(f);
  shared.sampled_documents = 1000;
  shared.read_at = 1.5e9;
  const std::vector<uint8_t> bytes = shared_collection_bson(shared);
  SharedCollection back;
  ASSERT_TRUE(read_shared_collection(bytes.data(), static_cast<uint32_t>(bytes.size()), &back));
  EXPECT_EQ(back.metadata.db, "shop");
  EXPECT_EQ(back.metadata.indexes.size(), 1u);
  EXPECT_EQ(back.metadata.indexes[0].keys, index.keys);
  EXPECT_TRUE(back.metadata.indexes[0].unique);
  EXPECT_EQ(back.metadata.indexes[0].expire_after_seconds, 30);
  EXPECT_EQ(back.metadata.indexes[0].accesses, 0u);
  EXPECT_EQ(back.metadata.validation_action, "warn");
  EXPECT_EQ(back.metadata.stats.documents, 2000u);
  EXPECT_EQ(back.metadata.unknown, shared.metadata.unknown);
  ASSERT_EQ(back.findings.size(), 1u);
  EXPECT_EQ(back.findings[0].kind, Finding::Kind::kLargeArray);
  EXPECT_EQ(back.findings[0].severity, Severity::kWarn);
  EXPECT_EQ(back.sampled_documents, 1000u);
  EXPECT_EQ(back.read_at, 1.5e9);
  const Bson not_facts(R"({"_id": "x"})");
  EXPECT_FALSE(read_shared_collection(not_facts.view().data, not_facts.view().size, &back));
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::advisor
