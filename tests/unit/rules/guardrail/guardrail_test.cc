// The query guardrail: which filters an index serves, the shape text, the rule keys, the index
// catalog and what the engine decides.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>

#include "docguard/rules/engine.h"
#include "docguard/rules/index_catalog.h"
#include "docguard/rules/query_guardrail.h"
#include "docguard/rules/rule_set.h"
#include "docguard/settings/yaml_settings.h"
#include "rules_yaml.h"
#include "test_messages.h"

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

using testing::error_of;
using testing::parse;

using testing::Bson;
using testing::request;

// A namespace's indexes as listIndexes lists them: the _id index first (without a collation, so
// the collection's default collation is the simple one), then `keys`.
NamespaceIndexes indexes(std::vector<IndexKeys> keys, bool complete = true) {
  NamespaceIndexes n;
  n.indexes.push_back({"_id_", {{"_id", "1"}}});
  for (size_t i = 0; i < keys.size(); ++i) n.indexes.push_back({"i" + std::to_string(i), keys[i]});
  n.complete = complete;
  return n;
}

IndexVerdict judge(const char* filter, const NamespaceIndexes* known, const char* sort = "{}",
                   IndexKeys* suggestion = nullptr) {
  Bson f(filter), s(sort);
  return judge_query(f.view(), s.view(), known, suggestion);
}

TEST(GuardrailServeTest, EmptyFilterAndIdAlwaysPass) {
  const auto none = indexes({});
  EXPECT_EQ(judge("{}", &none), IndexVerdict::kServed);
  EXPECT_EQ(judge(R"({"$comment": "x"})", &none), IndexVerdict::kServed);
  EXPECT_EQ(judge("{}", nullptr), IndexVerdict::kServed);  // empty passes even when unknown
  EXPECT_EQ(judge(R"({"_id": 5})", &none), IndexVerdict::kServed);
  EXPECT_EQ(judge(R"({"_id": {"$in": [1, 2]}, "x": 3})", &none), IndexVerdict::kServed);
  EXPECT_EQ(judge(R"({"status": "open"})", &none), IndexVerdict::kUnserved);
}

TEST(GuardrailServeTest, EqualityCompoundPrefixAndRange) {
  const auto known = indexes({{{"status", "1"}, {"created", "-1"}}, {{"total", "1"}}});
  EXPECT_EQ(judge(R"({"status": "open"})", &known), IndexVerdict::kServed);
  EXPECT_EQ(judge(R"({"status": "open", "x": 1})", &known), IndexVerdict::kServed);
  // Not a prefix: an index starting elsewhere does not serve.
  EXPECT_EQ(judge(R"({"created": 1})", &known), IndexVerdict::kUnserved);
  EXPECT_EQ(judge(R"({"total": {"$gt": 5}})", &known), IndexVerdict::kServed);
  IndexKeys suggestion;
  EXPECT_EQ(judge(R"({"a": 1, "b": {"$gt": 2}})", &known, R"({"c": -1})", &suggestion),
            IndexVerdict::kUnserved);
  EXPECT_EQ(index_keys_text(suggestion), "{a: 1, c: -1, b: 1}");  // ESR order
}

TEST(GuardrailServeTest, OrNeedsEveryBranch) {
  const auto known = indexes({{{"a", "1"}}, {{"b", "1"}}});
  EXPECT_EQ(judge(R"({"$or": [{"a": 1}, {"b": 2}]})", &known), IndexVerdict::kServed);
  IndexKeys suggestion;
  EXPECT_EQ(judge(R"({"$or": [{"a": 1}, {"c": 2}]})", &known, "{}", &suggestion),
            IndexVerdict::kUnserved);
  EXPECT_EQ(index_keys_text(suggestion), "{c: 1}");
  // An indexed field beside the $or serves the whole query.
  EXPECT_EQ(judge(R"({"a": 1, "$or": [{"x": 1}, {"y": 2}]})", &known), IndexVerdict::kServed);
  EXPECT_EQ(judge(R"({"$and": [{"$or": [{"a": 1}, {"b": 1}]}]})", &known), IndexVerdict::kServed);
  // A $nor of one predicate is its negation, which the index on a serves as it serves $ne.
  EXPECT_EQ(judge(R"({"$nor": [{"a": 1}]})", &known), IndexVerdict::kServed);
  EXPECT_EQ(judge(R"({"$nor": [{"a": 1}, {"b": 1}]})", &known), IndexVerdict::kUnserved);
  // An $expr comparison with a constant can use the index where a holds no arrays, which
  // listIndexes does not say.
  EXPECT_EQ(judge(R"({"$expr": {"$eq": ["$a", 1]}})", &known), IndexVerdict::kUnknown);
  EXPECT_EQ(judge(R"({"$expr": {"$eq": ["$c", 1]}})", &known), IndexVerdict::kUnserved);
}

TEST(GuardrailServeTest, TextGeoHashedAndWildcard) {
  const auto plain = indexes({{{"a", "1"}}});
  IndexKeys suggestion;
  // Without a text index the server fails a $text query itself: docguard passes it.
  EXPECT_EQ(judge(R"({"$text": {"$search": "x"}})", &plain, "{}", &suggestion),
            IndexVerdict::kUnknown);
  const auto text = indexes({{{"body", "text"}}});
  EXPECT_EQ(judge(R"({"$text": {"$search": "x"}})", &text), IndexVerdict::kServed);
  EXPECT_EQ(judge(R"({"body": "x"})", &text), IndexVerdict::kUnserved);  // text serves $text only

  const char* near =
      R"({"loc": {"$near": {"$geometry": {"type": "Point", "coordinates": [0, 0]}}}})";
  // So does $near without a geo index.
  EXPECT_EQ(judge(near, &plain, "{}", &suggestion), IndexVerdict::kUnknown);
  const auto geo = indexes({{{"loc", "2dsphere"}}});
  EXPECT_EQ(judge(near, &geo), IndexVerdict::kServed);

  const auto hashed = indexes({{{"h", "hashed"}}});
  EXPECT_EQ(judge(R"({"h": 5})", &hashed), IndexVerdict::kServed);
  EXPECT_EQ(judge(R"({"h": {"$gt": 5}})", &hashed), IndexVerdict::kUnserved);

  const auto wildcard = indexes({{{"attrs.$**", "1"}}});
  EXPECT_EQ(judge(R"({"attrs.color": "red"})", &wildcard), IndexVerdict::kServed);
  EXPECT_EQ(judge(R"({"other": "red"})", &wildcard), IndexVerdict::kUnserved);
}

TEST(GuardrailServeTest, UnknownAndIncompleteNeverRefuse) {
  EXPECT_EQ(judge(R"({"status": 1})", nullptr), IndexVerdict::kUnknown);
  const auto partial = indexes({{{"a", "1"}}}, false);
  EXPECT_EQ(judge(R"({"a": 1})", &partial), IndexVerdict::kServed);
  EXPECT_EQ(judge(R"({"b": 1})", &partial), IndexVerdict::kUnknown);
}

// An $or of many branches over many partial indexes: whether the whole query implies each
// index's filter is decided once per index, not once per branch (which cost branches squared
// times indexes: seconds of a worker for a 39 KB query).
TEST(GuardrailServeTest, AnOrOverPartialIndexesIsJudgedOncePerIndex) {
  NamespaceIndexes known;
  known.indexes.push_back({"_id_", {{"_id", "1"}}});
  for (int i = 0; i < 64; ++i) {
    const std::string field = "f" + std::to_string(i);
    Bson spec(R"({"key": {")" + field + R"(": 1}, "name": ")" + field + R"(_1",
                  "partialFilterExpression": {")" +
              field + R"(": {"$exists": true}}})");
    known.indexes.push_back(known_index_of(spec.view()));
  }
  known.complete = true;
  std::string filter = R"({"$or": [)";
  for (int b = 0; b < 2000; ++b) {
    filter += (b ? ", " : "") + std::string(R"({"f)") + std::to_string(b % 64) + R"(": )" +
              std::to_string(b) + "}";
  }
  filter += "]}";
  EXPECT_GT(filter.size(), 25000u);
  const auto started = std::chrono::steady_clock::now();
  // Each branch is served by its field's index, whose filter the branch implies.
  EXPECT_EQ(judge(filter.c_str(), &known), IndexVerdict::kServed);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("$or of 2,000 branches over 64 partial indexes: %.3f s\n", took);
}

std::string shape_of(const char* body) {
  auto m = request(body);
  std::string out;
  append_shape_text(out, query_parts(m->cmd));
  return out;
}

TEST(GuardrailShapeTest, NamesFieldsAndOperatorsNeverValues) {
  EXPECT_EQ(shape_of(R"({"find": "c", "$db": "d", "filter": {"status": "secret", "total":
                     {"$gt": 5, "$lt": 9}}, "sort": {"created": -1}, "projection": {"name": 1}})"),
            "{status: ?, total: {$gt: ?, $lt: ?}} sort {created: -1} projection {name}");
  EXPECT_EQ(shape_of(R"({"find": "c", "$db": "d", "filter": {"$or": [{"a": 1}, {"b": {"$in":
                     [1, 2]}}], "items": {"$elemMatch": {"sku": "x"}}}})"),
            "{$or: [{a: ?}, {b: {$in: ?}}], items: {$elemMatch: {sku: ?}}}");
  EXPECT_EQ(shape_of(R"({"find": "c", "$db": "d"})"), "{}");
  EXPECT_EQ(shape_of(R"({"aggregate": "c", "$db": "d", "pipeline": [{"$match": {"a": 1}},
                     {"$sort": {"b": 1}}, {"$group": {"_id": "$a"}}], "cursor": {}})"),
            "pipeline [$match {a: ?}, $sort {b: 1}, $group]");
  EXPECT_EQ(shape_of(R"({"count": "c", "$db": "d", "query": {"a": 1}})"), "{a: ?}");
  std::string long_filter = R"({"find": "c", "$db": "d", "filter": {)";
  for (int i = 0; i < 200; ++i)
    long_filter += (i ? ", " : "") + std::string("\"field") + std::to_string(i) + "\": 1";
  long_filter += "}}";
  const std::string text = shape_of(long_filter.c_str());
  EXPECT_LE(text.size(), 540u);
  EXPECT_NE(text.find("..."), std::string::npos);
}

TEST(GuardrailConfigTest, ParsesKeys) {
  auto set = parse(R"(
rules:
  - id: ci
    match: "shop.*"
    apps: ["ci-*"]
    action: block
    require_index: true
    max_time_ms: 2000
    max_time_ms_writes: true
    allow:
      - {shape: "{status: ?}", owner: team-x, until: 2027-01-31}
)");
  const Rule& r = set->rules().at(0);
  EXPECT_TRUE(r.guardrail.require_index);
  EXPECT_EQ(r.guardrail.max_time_ms, 2000);
  EXPECT_TRUE(r.guardrail.max_time_ms_writes);
  ASSERT_EQ(r.guardrail.allow.size(), 1u);
  EXPECT_EQ(r.guardrail.allow[0].owner, "team-x");
  EXPECT_EQ(r.guardrail.allow[0].expires_unix_ms, end_of_day_unix_ms("2027-01-31"));
  EXPECT_EQ(end_of_day_unix_ms("1970-01-01"), 86'400'000);
  EXPECT_EQ(end_of_day_unix_ms("2027-02-29"), -1);
  EXPECT_EQ(end_of_day_unix_ms("2028-02-29"), end_of_day_unix_ms("2028-03-01") - 86'400'000);
}

TEST(GuardrailConfigTest, BadValuesNameTheKey) {
  EXPECT_NE(error_of("rules: [{match: '*', require_index: maybe}]").find("require_index"),
            std::string::npos);
  EXPECT_NE(error_of("rules: [{match: '*', max_time_ms: 0}]").find("at least 1"),
            std::string::npos);
  EXPECT_NE(error_of("rules: [{match: '*', allow: [{shape: x, owner: y, until: 31/01/2027}]}]")
                .find("YYYY-MM-DD"),
            std::string::npos);
  EXPECT_NE(error_of("rules: [{match: '*', allow: [{shape: x, until: 2027-01-31}]}]").find("owner"),
            std::string::npos);
  EXPECT_NE(
      error_of("rules: [{match: '*', allow: [{shape: x, owner: y, until: 2027-01-31, z: 1}]}]")
          .find("unknown key"),
      std::string::npos);
}

TEST(IndexCatalogTest, LearnsFromCatalogReplies) {
  IndexCatalog catalog;
  EXPECT_EQ(catalog.find("d", "c"), nullptr);
  Bson ok(R"({"ok": 1})");
  auto create = request(R"({"createIndexes": "c", "$db": "d", "indexes": [{"key": {"a": 1},
                        "name": "a_1"}]})");
  learn_from_catalog_reply(catalog, create->cmd, ok.view());
  auto known = catalog.find("d", "c");
  ASSERT_NE(known, nullptr);
  EXPECT_FALSE(known->complete);  // others may exist
  EXPECT_EQ(known->indexes.size(), 1u);

  auto list = request(R"({"listIndexes": "c", "$db": "d"})");
  Bson listed(R"({"ok": 1, "cursor": {"id": 0, "ns": "d.c", "firstBatch": [
                {"v": 2, "key": {"_id": 1}, "name": "_id_"},
                {"v": 2, "key": {"a": 1, "b": -1}, "name": "a_1_b_-1"}]}})");
  learn_from_catalog_reply(catalog, list->cmd, listed.view());
  known = catalog.find("d", "c");
  ASSERT_NE(known, nullptr);
  EXPECT_TRUE(known->complete);
  ASSERT_EQ(known->indexes.size(), 2u);
  EXPECT_EQ(index_keys_text(known->indexes[1].keys), "{a: 1, b: -1}");

  auto drop = request(R"({"dropIndexes": "c", "$db": "d", "index": "a_1_b_-1"})");
  learn_from_catalog_reply(catalog, drop->cmd, ok.view());
  EXPECT_EQ(catalog.find("d", "c")->indexes.size(), 1u);
  auto drop_db = request(R"({"dropDatabase": 1, "$db": "d"})");
  learn_from_catalog_reply(catalog, drop_db->cmd, ok.view());
  EXPECT_EQ(catalog.find("d", "c"), nullptr);
}

TEST(IndexCatalogTest, WhatTheCatalogCommandsChangeAsTheServerDoes) {
  IndexCatalog catalog;
  Bson ok(R"({"ok": 1})");
  auto learn = [&](const char* body, const Bson& reply) {
    auto m = request(body);
    learn_from_catalog_reply(catalog, m->cmd, reply.view());
  };
  const Bson listed(R"({"ok": 1, "cursor": {"id": 0, "ns": "d.ts", "firstBatch": [
                      {"v": 2, "key": {"meta": 1, "t": 1}, "name": "meta_1_t_1"}]}})");
  // A client's listIndexes of a time-series collection leaves it one: its queries are planned
  // on its buckets, which that list does not describe.
  learn(R"({"create": "ts", "$db": "d", "timeseries": {"timeField": "t", "metaField": "meta"}})",
        ok);
  learn(R"({"listIndexes": "ts", "$db": "d"})", listed);
  EXPECT_EQ(catalog.find("d", "ts")->kind, NamespaceKind::kTimeseries);
  EXPECT_EQ(judge(R"({"x": 1})", catalog.find("d", "ts").get()), IndexVerdict::kUnknown);

  // collMod un-hides an index (by name or key pattern), and hides one.
  const Bson hidden(R"({"ok": 1, "cursor": {"id": 0, "ns": "d.c", "firstBatch": [
                      {"v": 2, "key": {"_id": 1}, "name": "_id_"},
                      {"v": 2, "key": {"a": 1}, "name": "a_1", "hidden": true}]}})");
  learn(R"({"listIndexes": "c", "$db": "d"})", hidden);
  EXPECT_EQ(judge(R"({"a": 1})", catalog.find("d", "c").get()), IndexVerdict::kUnserved);
  learn(R"({"collMod": "c", "$db": "d", "index": {"name": "a_1", "hidden": false}})", ok);
  EXPECT_EQ(judge(R"({"a": 1})", catalog.find("d", "c").get()), IndexVerdict::kServed);
  learn(R"({"collMod": "c", "$db": "d", "index": {"keyPattern": {"a": 1}, "hidden": true}})", ok);
  EXPECT_EQ(judge(R"({"a": 1})", catalog.find("d", "c").get()), IndexVerdict::kUnserved);

  // A collection created with a collation: its _id index has it.
  learn(R"({"create": "fr", "$db": "d", "collation": {"locale": "fr", "strength": 1}})", ok);
  EXPECT_FALSE(catalog.find("d", "fr")->indexes.front().collation.empty());
  learn(R"({"create": "plain", "$db": "d", "collation": {"locale": "simple"}})", ok);
  EXPECT_TRUE(catalog.find("d", "plain")->indexes.front().collation.empty());

  // Dropped: maybe created again by a write docguard does not follow, so not known.
  learn(R"({"drop": "c", "$db": "d"})", ok);
  EXPECT_EQ(judge(R"({"a": 1})", catalog.find("d", "c").get()), IndexVerdict::kUnknown);
}

TEST(IndexCatalogTest, AListOfIndexBuildInfoIsNotTakenForNoIndexes) {
  // listIndexes with includeIndexBuildInfo answers {spec, indexBuildInfo} per index: not a list
  // docguard reads, so nothing is learned (every query stays unknown, none refused).
  IndexCatalog catalog;
  auto list = request(R"({"listIndexes": "c", "includeIndexBuildInfo": true, "$db": "d"})");
  Bson listed(R"({"ok": 1, "cursor": {"id": 0, "ns": "d.c", "firstBatch": [
                {"spec": {"v": 2, "key": {"_id": 1}, "name": "_id_"}},
                {"spec": {"v": 2, "key": {"a": 1}, "name": "a_1"}}]}})");
  learn_from_catalog_reply(catalog, list->cmd, listed.view());
  EXPECT_EQ(catalog.find("d", "c"), nullptr);
}

class Counting : public MeasurementSink {
 public:
  void on_violation(const NamespaceLabels&, std::string_view rule, Action action,
                    std::string_view app) override {
    std::lock_guard lock(mutex);
    ++violations[std::string(rule) + ":" + action_name(action) + ":" + std::string(app)];
  }
  void on_candidate_violation(const NamespaceLabels&, std::string_view rule, Action action,
                              std::string_view app) override {
    std::lock_guard lock(mutex);
    ++candidates[std::string(rule) + ":" + action_name(action) + ":" + std::string(app)];
  }
  void on_guardrail_unknown(const NamespaceLabels& ns) override {
    std::lock_guard lock(mutex);
    ++unknown[std::string(ns.db) + "." + std::string(ns.coll)];
  }
  std::mutex mutex;
  std::map<std::string, int> violations, candidates, unknown;
};

class GuardrailEngineTest : public ::testing::Test {
 protected:
  void use(const std::string& yaml) {
    engine = std::make_unique<Engine>(parse(yaml), &sink, nullptr);
    engine->index_catalog().set(
        "shop", "orders", {{"_id_", {{"_id", "1"}}}, {"status_1", {{"status", "1"}}}}, "test");
  }
  Verdict inspect(const char* body, std::string_view app = "ci-nightly") {
    auto m = request(body);
    return engine->inspect(m->cmd, RequestContext{app, "127.0.0.1:5000"});
  }
  Counting sink;
  std::unique_ptr<Engine> engine;
};

constexpr const char* kBlockCi = R"(
rules:
  - id: ci-indexes
    match: "shop.*"
    apps: ["ci-*"]
    action: block
    require_index: true
)";

TEST_F(GuardrailEngineTest, BlocksUnindexedReadsOfScopedAppsOnly) {
  use(kBlockCi);
  Verdict v = inspect(R"({"find": "orders", "$db": "shop", "filter": {"customer": "x"}})");
  EXPECT_TRUE(v.block_command);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(v.violations[0].kind, RuleKind::kRequireIndex);
  EXPECT_EQ(v.violations[0].unindexed_query().rule_id, "ci-indexes");
  EXPECT_EQ(v.violations[0].unindexed_query().shape, "{customer: ?}");
  EXPECT_EQ(index_keys_text(v.violations[0].unindexed_query().suggested_index), "{customer: 1}");
  EXPECT_FALSE(inspect(R"({"find": "orders", "$db": "shop", "filter": {"customer": "x"}})", "web")
                   .any_block());
  EXPECT_FALSE(
      inspect(R"({"find": "orders", "$db": "shop", "filter": {"status": "open"}})").any_block());
  EXPECT_FALSE(inspect(R"({"find": "orders", "$db": "shop", "filter": {}})").any_block());
  EXPECT_EQ(sink.violations["require_index:block:ci-nightly"], 1);
  // count, distinct and an aggregate's leading $match are judged; explain never.
  EXPECT_TRUE(inspect(R"({"count": "orders", "$db": "shop", "query": {"x": 1}})").block_command);
  EXPECT_TRUE(inspect(R"({"distinct": "orders", "key": "a", "$db": "shop", "query": {"x": 1}})")
                  .block_command);
  EXPECT_TRUE(inspect(R"({"aggregate": "orders", "$db": "shop", "cursor": {}, "pipeline":
                      [{"$match": {"x": 1}}, {"$group": {"_id": "$a"}}]})")
                  .block_command);
  EXPECT_FALSE(inspect(R"({"aggregate": "orders", "$db": "shop", "cursor": {}, "pipeline":
                       [{"$group": {"_id": "$a"}}, {"$match": {"x": 1}}]})")
                   .any_block());
  EXPECT_FALSE(
      inspect(R"({"explain": {"find": "orders", "filter": {"x": 1}}, "$db": "shop"})").any_block());
  EXPECT_FALSE(inspect(R"({"getMore": 5, "collection": "orders", "$db": "shop"})").any_block());
}

TEST_F(GuardrailEngineTest, WritesAreJudgedPerStatement) {
  use(kBlockCi);
  Verdict v = inspect(R"({"update": "orders", "$db": "shop", "ordered": false, "updates": [
      {"q": {"status": "a"}, "u": {"$set": {"x": 1}}},
      {"q": {"x": 2}, "u": {"$set": {"x": 1}}, "multi": true},
      {"q": {"_id": 3}, "u": {"$set": {"x": 1}}}]})");
  EXPECT_EQ(v.blocked_statements, std::vector<int32_t>{1});
  EXPECT_FALSE(v.block_command);
  v = inspect(R"({"delete": "orders", "$db": "shop", "ordered": true, "deletes": [
      {"q": {"x": 2}, "limit": 0}, {"q": {"y": 2}, "limit": 0}]})");
  EXPECT_EQ(v.blocked_statements, std::vector<int32_t>{0});  // ordered: stops at the first
  v = inspect(R"({"findAndModify": "orders", "$db": "shop", "query": {"x": 1},
                 "update": {"$set": {"y": 1}}})");
  EXPECT_TRUE(v.block_command);
  // Inserts have no filter.
  EXPECT_FALSE(
      inspect(R"({"insert": "orders", "$db": "shop", "documents": [{"x": 1}]})").any_block());
}

TEST_F(GuardrailEngineTest, UnknownIndexesAreCountedNeverRefused) {
  use(kBlockCi);
  EXPECT_FALSE(inspect(R"({"find": "items", "$db": "shop", "filter": {"x": 1}})").any_block());
  EXPECT_EQ(sink.unknown["shop.items"], 1);
  EXPECT_NE(engine->status_json().find(R"("unknown":{"shop.items":1})"), std::string::npos);
  // admin, local, config and system.* are never judged, as the server never refuses them.
  EXPECT_FALSE(
      inspect(R"({"find": "system.users", "$db": "shop", "filter": {"x": 1}})").any_block());
}

TEST_F(GuardrailEngineTest, CandidatesCountAndBlockNothing) {
  use(R"(
rules: []
candidate_rules:
  - id: would-need-indexes
    match: "shop.*"
    action: block
    require_index: true
)");
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(inspect(R"({"find": "orders", "$db": "shop", "filter": {"x": 1}})").any_block());
  }
  EXPECT_EQ(sink.candidates["require_index:block:ci-nightly"], 3);
  EXPECT_TRUE(sink.violations.empty());
}

TEST_F(GuardrailEngineTest, ExceptionsApplyUntilTheyExpire) {
  use(R"(
rules:
  - match: "shop.*"
    action: block
    require_index: true
    allow:
      - {shape: "{customer: ?}", owner: team-x, until: 2999-12-31}
      - {shape: "{total: {$gt: ?}}", owner: team-y, until: 2020-01-31}
)");
  EXPECT_FALSE(
      inspect(R"({"find": "orders", "$db": "shop", "filter": {"customer": "x"}})").any_block());
  Verdict v = inspect(R"({"find": "orders", "$db": "shop", "filter": {"total": {"$gt": 1}}})");
  EXPECT_TRUE(v.block_command);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(v.violations[0].unindexed_query().rule_id, "shop.*");  // no id: its match
  const std::string status = engine->status_json();
  EXPECT_NE(status.find(R"("owner":"team-y","until":"2020-01-31","expired":true)"),
            std::string::npos)
      << status;
  EXPECT_NE(status.find(R"("owner":"team-x","until":"2999-12-31","expired":false)"),
            std::string::npos);
}

TEST_F(GuardrailEngineTest, IndexCreatedThroughDocguardAppliesAtOnce) {
  use(kBlockCi);
  const char* find = R"({"find": "orders", "$db": "shop", "filter": {"customer": "x"}})";
  EXPECT_TRUE(inspect(find).block_command);
  auto create = request(R"({"createIndexes": "orders", "$db": "shop", "indexes": [
                        {"key": {"customer": 1}, "name": "customer_1"}]})");
  auto reply = codec::OpMsgBuilder(1, 42).body(Bson(R"({"ok": 1})").get()).finish();
  engine->observe_catalog_reply(create->cmd, codec::OpMsg::parse(reply));
  EXPECT_FALSE(inspect(find).any_block());
}

// The queries a team turning the guardrail on meets first: pagination, feeds and job queues
// over an index on {created: -1}. The server serves all three under notablescan.
TEST_F(GuardrailEngineTest, ServesWhatTheServersPlannerServes) {
  use(kBlockCi);
  engine->index_catalog().set(
      "shop", "jobs", {{"_id_", {{"_id", "1"}}}, {"created_-1", {{"created", "-1"}}}}, "test");
  EXPECT_FALSE(inspect(R"({"find": "jobs", "$db": "shop",
                          "filter": {"status": "open", "created": {"$gte": 10}}})")
                   .any_block());
  EXPECT_FALSE(inspect(R"({"find": "jobs", "$db": "shop", "filter": {"status": "open"},
                          "sort": {"created": -1}, "limit": 20})")
                   .any_block());
  EXPECT_FALSE(inspect(R"({"find": "jobs", "$db": "shop", "filter": {"status": "open"},
                          "hint": "created_-1"})")
                   .any_block());
  // A $natural hint asks for the collection scan the server refuses, with its own message.
  Verdict v = inspect(R"({"find": "jobs", "$db": "shop", "filter": {"status": "open"},
                         "hint": {"$natural": 1}})");
  ASSERT_TRUE(v.block_command);
  EXPECT_EQ(v.violations[0].unindexed_query().scan_reason, ScanReason::kNaturalHint);
  // The optimizer moves a $match ahead of an $addFields it does not read: judged, and refused.
  EXPECT_TRUE(inspect(R"({"aggregate": "jobs", "$db": "shop", "cursor": {}, "pipeline":
                        [{"$addFields": {"x": 1}}, {"$match": {"status": "open"}}]})")
                  .block_command);
  EXPECT_FALSE(inspect(R"({"aggregate": "jobs", "$db": "shop", "cursor": {}, "pipeline":
                         [{"$match": {"status": "open"}}, {"$addFields": {"x": 1}},
                          {"$match": {"created": {"$gte": 10}}}]})")
                   .any_block());
  // A $match on the field $addFields computes stays behind it: the query is empty.
  EXPECT_FALSE(inspect(R"({"aggregate": "jobs", "$db": "shop", "cursor": {}, "pipeline":
                         [{"$addFields": {"status": "x"}}, {"$match": {"status": "open"}}]})")
                   .any_block());
  // Write statements take their hint and collation.
  v = inspect(R"({"delete": "jobs", "$db": "shop", "ordered": false, "deletes": [
      {"q": {"status": "a"}, "limit": 0, "hint": "created_-1"},
      {"q": {"status": "a"}, "limit": 0}]})");
  EXPECT_EQ(v.blocked_statements, std::vector<int32_t>{1});
}

TEST_F(GuardrailEngineTest, ViewsTimeSeriesAndDroppedCollectionsAreNeverRefused) {
  use(kBlockCi);
  auto created =
      request(R"({"create": "recent", "viewOn": "orders", "pipeline": [], "$db": "shop"})");
  learn_from_catalog_reply(engine->index_catalog(), created->cmd, {});
  auto series = request(R"({"create": "ticks", "timeseries": {"timeField": "t"}, "$db": "shop"})");
  learn_from_catalog_reply(engine->index_catalog(), series->cmd, {});
  auto dropped = request(R"({"drop": "orders", "$db": "shop"})");
  learn_from_catalog_reply(engine->index_catalog(), dropped->cmd, {});
  for (const char* coll : {"recent", "ticks", "orders"}) {
    const std::string body =
        std::string(R"({"find": ")") + coll + R"(", "$db": "shop", "filter": {"customer": "x"}})";
    EXPECT_FALSE(inspect(body.c_str()).any_block()) << coll;
  }
  // Creating an index on the dropped collection creates it again: its scans are refused.
  auto index = request(R"({"createIndexes": "orders", "$db": "shop",
                           "indexes": [{"key": {"status": 1}, "name": "status_1"}]})");
  learn_from_catalog_reply(engine->index_catalog(), index->cmd, {});
  EXPECT_TRUE(
      inspect(R"({"find": "orders", "$db": "shop", "filter": {"customer": "x"}})").block_command);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
