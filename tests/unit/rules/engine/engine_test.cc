#include "docguard/rules/engine.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "docguard/settings/yaml_settings.h"
#include "test_messages.h"
#include "tracked_documents.h"

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

using settings::parse_rules;

using testing::Bson;
using testing::int_array;
using testing::Message;
using testing::request;

// Thread-safe, like the proxy's Prometheus metrics: the engine calls it from every io thread.
class RecordingMeasurements : public MeasurementSink {
 public:
  void on_command(const NamespaceLabels& ns, std::string_view command,
                  std::string_view /*app*/) override {
    std::lock_guard lock(mutex);
    ++commands[std::string(ns.db) + "." + std::string(ns.coll) + ":" + std::string(command)];
  }
  void on_document_size(const NamespaceLabels&, std::string_view source, double bytes) override {
    std::lock_guard lock(mutex);
    sizes.emplace_back(std::string(source), bytes);
  }
  void on_array_length(const NamespaceLabels&, std::string_view field, double length) override {
    std::lock_guard lock(mutex);
    arrays[std::string(field)] = length;
  }
  void on_array_push(const NamespaceLabels&, std::string_view field, double elements) override {
    std::lock_guard lock(mutex);
    pushes[std::string(field)] += elements;
  }
  void on_read(const NamespaceLabels& ns, bool /*with_lookup*/, std::string_view /*app*/) override {
    std::lock_guard lock(mutex);
    ++reads[std::string(ns.db) + "." + std::string(ns.coll)];
  }
  void on_lookup(const NamespaceLabels&, std::string_view from) override {
    std::lock_guard lock(mutex);
    ++lookups[std::string(from)];
  }
  void on_violation(const NamespaceLabels& ns, std::string_view rule, Action action,
                    std::string_view app) override {
    std::lock_guard lock(mutex);
    ++violations[std::string(ns.db) + "." + std::string(ns.coll) + ":" + std::string(rule) + ":" +
                 action_name(action)];
    ++violations_by_app[std::string(app)];
  }
  std::mutex mutex;
  std::map<std::string, int> commands, reads, lookups, violations, violations_by_app;
  std::vector<std::pair<std::string, double>> sizes;
  std::map<std::string, double> arrays, pushes;
};

std::shared_ptr<const RuleSet> rules(const std::string& yaml) {
  return parse_rules(YAML::Load(yaml), "test.yaml");
}

const RequestContext kCtx{"test-app", "127.0.0.1:5000"};

class EngineTest : public ::testing::Test {
 protected:
  void use(const std::string& yaml) {
    engine = std::make_unique<Engine>(rules(yaml), &measurements, nullptr);
  }
  Verdict inspect(const Message& m) { return engine->inspect(m.cmd, kCtx); }
  RecordingMeasurements measurements;
  std::unique_ptr<Engine> engine;
};

constexpr const char* kShopRules = R"(
mode: warn
rules:
  - match: "shop.products"
    action: block
    max_document_bytes: 1KiB
    max_array_length: 100
    array_length: { "variants.tags": 5, reviews: 10 }
    require_push_slice: true
    max_nesting_depth: 6
)";

TEST_F(EngineTest, CleanInsertHasNoViolationsAndIsMeasured) {
  use(kShopRules);
  auto m = request(R"({"insert": "products", "$db": "shop"})", "documents",
                   {R"({"_id": 1, "reviews": [1, 2], "variants": [{"tags": [1, 2, 3]}]})"});
  Verdict v = inspect(*m);
  EXPECT_TRUE(v.violations.empty());
  EXPECT_FALSE(v.any_block());
  EXPECT_EQ(measurements.commands["shop.products:insert"], 1);
  ASSERT_EQ(measurements.sizes.size(), 1u);
  EXPECT_EQ(measurements.sizes[0].first, "insert");
  EXPECT_EQ(measurements.arrays["reviews"], 2);
  EXPECT_EQ(measurements.arrays["variants.tags"], 3);
}

TEST_F(EngineTest, DocumentTooLargeIsBlockedWithItsId) {
  use(kShopRules);
  std::string big = "{\"_id\": \"big\", \"blob\": \"" + std::string(2000, 'x') + "\"}";
  auto m = request(R"({"insert": "products", "$db": "shop"})", "documents",
                   {R"({"_id": 1})", big, R"({"_id": 3})"});
  Verdict v = inspect(*m);
  ASSERT_EQ(v.violations.size(), 1u);
  const Violation& viol = v.violations[0];
  EXPECT_EQ(viol.kind, RuleKind::kMaxDocumentBytes);
  EXPECT_EQ(viol.rule_match, "shop.products");
  EXPECT_EQ(viol.rule_line, 4);  // the rule's line in kShopRules, reported in logs and errInfo
  EXPECT_EQ(viol.action, Action::kBlock);
  EXPECT_EQ(viol.statement_index, 1);
  EXPECT_EQ(viol.bound, 1024);
  EXPECT_GT(viol.measured, 2000);
  EXPECT_EQ(
      Bson(codec::BsonView{viol.failing_id.data(), static_cast<uint32_t>(viol.failing_id.size())})
          .json(),
      R"({ "_id" : "big" })");
  EXPECT_EQ(v.blocked_statements, std::vector<int32_t>{1});
  EXPECT_FALSE(v.block_command);
  EXPECT_EQ(measurements.violations["shop.products:max_document_bytes:block"], 1);
}

TEST_F(EngineTest, ArrayRulesPerPathAndAnyArray) {
  use(kShopRules);
  auto m = request(R"({"insert": "products", "$db": "shop", "ordered": false, "documents": [
                        {"_id": 1, "variants": [{"tags": [1, 2, 3, 4, 5, 6]}]},
                        {"_id": 2, "list": )" +
                   int_array(101) + R"(},
                        {"_id": 3, "reviews": )" +
                   int_array(10) + R"(}]})");
  Verdict v = inspect(*m);
  ASSERT_EQ(v.violations.size(), 2u);
  EXPECT_EQ(v.violations[0].kind, RuleKind::kArrayLength);
  EXPECT_EQ(v.violations[0].field_path, "variants.tags");
  EXPECT_EQ(v.violations[0].measured, 6);
  EXPECT_EQ(v.violations[0].bound, 5);
  EXPECT_EQ(v.violations[1].kind, RuleKind::kMaxArrayLength);
  EXPECT_EQ(v.violations[1].field_path, "list");
  EXPECT_EQ(v.violations[1].statement_index, 1);
  EXPECT_EQ(v.blocked_statements, (std::vector<int32_t>{0, 1}));
}

TEST_F(EngineTest, OrderedBatchStopsAtTheFirstBlockedStatement) {
  use(kShopRules);
  // Statements after the first refused one never run, so they are neither judged nor counted.
  auto m = request(R"({"insert": "products", "$db": "shop", "documents": [
                        {"_id": 1, "list": )" +
                   int_array(101) + R"(},
                        {"_id": 2, "list": )" +
                   int_array(101) + R"(}]})");
  Verdict v = inspect(*m);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(v.blocked_statements, std::vector<int32_t>{0});
}

TEST_F(EngineTest, BlockedPushDoesNotGrowTheTracker) {
  use(R"(
rules:
  - match: "shop.*"
    action: block
    array_length: { items: 5 }
)");
  // Regression: the tracker learned growth from a $push docguard refused, and then warned
  // about a later, legitimate $push.
  inspect(
      *request(R"({"insert": "c", "$db": "shop", "documents": [{"_id": 1, "items": [1, 2, 3]}]})"));
  Verdict blocked = inspect(*request(R"({"update": "c", "$db": "shop", "updates": [
      {"q": {"_id": 1}, "u": {"$push": {"items": {"$each": [4, 5, 6, 7, 8, 9]}}}}]})"));
  ASSERT_EQ(blocked.violations.size(), 1u);
  EXPECT_EQ(blocked.violations[0].kind, RuleKind::kArrayLength);
  Verdict ok = inspect(*request(R"({"update": "c", "$db": "shop", "updates": [
      {"q": {"_id": 1}, "u": {"$push": {"items": 4}}}]})"));
  EXPECT_TRUE(ok.violations.empty());
  Verdict past = inspect(*request(R"({"update": "c", "$db": "shop", "updates": [
      {"q": {"_id": 1}, "u": {"$push": {"items": {"$each": [5, 6]}}}}]})"));
  ASSERT_EQ(past.violations.size(), 1u);
  EXPECT_EQ(past.violations[0].kind, RuleKind::kTrackedArrayLength);
  EXPECT_EQ(past.violations[0].measured, 6);
}

TEST_F(EngineTest, OperatorUpsertSizeIsAtLeastWhatSetWrites) {
  use(R"(
rules:
  - match: "shop.*"
    action: block
    max_document_bytes: 2KiB
)");
  const std::string big(3000, 'y');
  Verdict v = inspect(*request(R"({"update": "c", "$db": "shop", "updates": [
      {"q": {"k": 1}, "u": {"$set": {"p": ")" +
                               big + R"("}}, "upsert": true}]})"));
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(v.violations[0].kind, RuleKind::kMaxDocumentBytes);
  EXPECT_GT(v.violations[0].measured, 3000);
}

TEST_F(EngineTest, NestingDepth) {
  use(kShopRules);
  auto m = request(R"({"insert": "products", "$db": "shop", "documents": [
                        {"_id": 1, "a": {"b": {"c": {"d": {"e": {"f": {"g": 1}}}}}}}]})");
  Verdict v = inspect(*m);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(v.violations[0].kind, RuleKind::kMaxNestingDepth);
  EXPECT_EQ(v.violations[0].measured, 7);
  EXPECT_EQ(v.violations[0].bound, 6);
}

TEST_F(EngineTest, OtherNamespacesAreNotJudgedByThisRule) {
  use(kShopRules);
  auto m = request(R"({"insert": "orders", "$db": "shop", "documents": [{"list": )" +
                   int_array(500) + "}]}");
  EXPECT_TRUE(inspect(*m).violations.empty());
}

TEST_F(EngineTest, PushWithoutSliceAndTooManyElements) {
  use(kShopRules);
  auto m = request(R"({"update": "products", "$db": "shop", "ordered": false, "updates": [
      {"q": {"_id": 1}, "u": {"$push": {"reviews": {"$each": [1, 2, 3], "$slice": -10}}}},
      {"q": {"_id": 2}, "u": {"$push": {"reviews": "r"}}},
      {"q": {"sku": "x"}, "u": {"$addToSet": {"labels": "l"}}},
      {"q": {"_id": 4}, "u": {"$push": {"reviews": {"$each": )" +
                   int_array(11) + R"(, "$slice": 20}}}},
      {"q": {"_id": 5}, "u": {"$set": {"reviews": )" +
                   int_array(12) + R"(}}}]})");
  Verdict v = inspect(*m);
  std::vector<std::string> got;
  for (const auto& viol : v.violations) {
    got.push_back(std::to_string(viol.statement_index) + ":" + rule_name(viol.kind) + ":" +
                  viol.field_path + ":" + std::to_string(static_cast<int>(viol.measured)));
  }
  EXPECT_EQ(got, (std::vector<std::string>{
                     "1:require_push_slice:reviews:1", "2:require_push_slice:labels:1",
                     "3:array_length:reviews:20", "4:array_length:reviews:12"}));
  EXPECT_EQ(v.blocked_statements, (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(measurements.pushes["reviews"], 3 + 1 + 11);
  // failingDocumentId comes from the filter's _id equality; none for {sku: "x"}.
  EXPECT_FALSE(v.violations[0].failing_id.empty());
  EXPECT_TRUE(v.violations[1].failing_id.empty());
}

TEST_F(EngineTest, PipelineUpdateConcatArrays) {
  use(kShopRules);
  auto m = request(R"({"update": "products", "$db": "shop", "updates": [
      {"q": {"_id": 1}, "u": [{"$set": {"reviews": {"$concatArrays": ["$reviews", )" +
                   int_array(11) + R"(]}}}]}]})");
  Verdict v = inspect(*m);
  ASSERT_EQ(v.violations.size(), 2u);
  EXPECT_EQ(v.violations[0].kind, RuleKind::kRequirePushSlice);
  EXPECT_EQ(v.violations[1].kind, RuleKind::kArrayLength);
  EXPECT_EQ(v.violations[1].measured, 11);
}

TEST_F(EngineTest, ReplacementAndUpsertAreMeasuredAsDocuments) {
  use(kShopRules);
  auto m = request(R"({"update": "products", "$db": "shop", "updates": [
      {"q": {"_id": 9}, "u": {"reviews": )" +
                   int_array(11) + R"(}, "upsert": true}]})");
  Verdict v = inspect(*m);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(v.violations[0].kind, RuleKind::kArrayLength);
  EXPECT_FALSE(v.violations[0].failing_id.empty());
  ASSERT_EQ(measurements.sizes.size(), 1u);
  EXPECT_EQ(measurements.sizes[0].first, "replace");
}

TEST_F(EngineTest, FindAndModifyBlocksTheWholeCommand) {
  use(kShopRules);
  auto m = request(R"({"findAndModify": "products", "$db": "shop", "query": {"_id": 1},
                       "update": {"$push": {"reviews": "x"}}})");
  Verdict v = inspect(*m);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(v.violations[0].statement_index, -1);
  EXPECT_TRUE(v.block_command);
  EXPECT_TRUE(v.blocked_statements.empty());

  auto replace = request(R"({"findAndModify": "products", "$db": "shop", "query": {"_id": 1},
                             "update": {"reviews": )" +
                         int_array(50) + "}, \"upsert\": true}");
  v = inspect(*replace);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(v.violations[0].kind, RuleKind::kArrayLength);
  EXPECT_TRUE(v.block_command);
}

TEST_F(EngineTest, WarnRulesDoNotBlock) {
  use(R"(
rules:
  - match: "*"
    max_array_length: 3
)");
  auto m = request(R"({"insert": "c", "$db": "d", "documents": [{"a": [1, 2, 3, 4]}]})");
  Verdict v = inspect(*m);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(v.violations[0].action, Action::kWarn);
  EXPECT_FALSE(v.any_block());
}

TEST_F(EngineTest, TrackerWarnsWhenPushTakesAKnownDocumentPastItsBound) {
  use(R"(
mode: block
rules:
  - match: "shop.*"
    array_length: { tags: 20 }
)");
  auto insert = request(R"({"insert": "items", "$db": "shop", "documents": [
                             {"_id": {"$oid": "65a000000000000000000001"}, "tags": )" +
                        int_array(18) + "}]}");
  EXPECT_TRUE(inspect(*insert).violations.empty());
  EXPECT_EQ(tracked_documents(*engine), 1u);
  auto push = request(R"({"update": "items", "$db": "shop", "updates": [
      {"q": {"_id": {"$oid": "65a000000000000000000001"}}, "u": {"$push": {"tags": 1}}},
      {"q": {"_id": {"$oid": "65a000000000000000000001"}}, "u": {"$push": {"tags": {"$each": [1, 2]}}}}]})");
  Verdict v = inspect(*push);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(v.violations[0].kind, RuleKind::kTrackedArrayLength);
  EXPECT_EQ(v.violations[0].statement_index, 1);
  EXPECT_EQ(v.violations[0].measured, 21);
  EXPECT_EQ(v.violations[0].bound, 20);
  EXPECT_EQ(v.violations[0].action, Action::kWarn);  // never blocks: the tracker may be stale
  EXPECT_FALSE(v.any_block());
  // A delete forgets the document.
  auto del = request(R"({"delete": "items", "$db": "shop", "deletes": [
      {"q": {"_id": {"$oid": "65a000000000000000000001"}}, "limit": 1}]})");
  inspect(*del);
  EXPECT_EQ(tracked_documents(*engine), 0u);
}

TEST_F(EngineTest, LookupRatioOverTheWindow) {
  use(R"(
rules:
  - match: "shop.*"
    max_lookup_ratio: 0.5
    lookup_min_reads: 3
)");
  auto find = request(R"({"find": "products", "$db": "shop", "filter": {}})");
  auto agg = request(R"({"aggregate": "products", "$db": "shop", "cursor": {}, "pipeline": [
                          {"$lookup": {"from": "reviews", "as": "r", "localField": "_id",
                                       "foreignField": "pid"}}]})");
  EXPECT_TRUE(inspect(*find).violations.empty());
  EXPECT_TRUE(inspect(*agg).violations.empty());  // 1 of 2, and below min reads
  Verdict v = inspect(*agg);                      // 2 of 3 > 0.5
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(v.violations[0].kind, RuleKind::kMaxLookupRatio);
  EXPECT_NEAR(v.violations[0].measured, 2.0 / 3, 1e-9);
  EXPECT_EQ(v.violations[0].action, Action::kWarn);
  EXPECT_FALSE(v.any_block());
  EXPECT_EQ(measurements.reads["shop.products"], 3);
  EXPECT_EQ(measurements.lookups["reviews"], 2);
  // A read without $lookup is never the one reported.
  EXPECT_TRUE(inspect(*find).violations.empty());
}

TEST_F(EngineTest, LookupRatioWindowSlides) {
  use(R"(
rules:
  - match: "*"
    action: block
    max_lookup_ratio: 0.5
    lookup_window: 60s
    lookup_min_reads: 1
)");
  auto t = std::chrono::steady_clock::time_point(std::chrono::hours(1000));
  engine->set_clock([&] { return t; });
  auto agg = request(R"({"aggregate": "p", "$db": "s", "cursor": {}, "pipeline": [
                          {"$lookup": {"from": "r", "as": "r"}}]})");
  Verdict v = inspect(*agg);
  EXPECT_TRUE(v.block_command);  // explicit block on a read
  t += std::chrono::seconds(120);
  auto find = request(R"({"find": "p", "$db": "s"})");
  for (int i = 0; i < 3; ++i) inspect(*find);
  v = inspect(*agg);  // the old lookup has left the window: 1 of 4
  EXPECT_TRUE(v.violations.empty());
}

TEST_F(EngineTest, LookupsInViewsAndExplain) {
  use(R"(
rules:
  - match: "*"
    max_lookup_ratio: 0.1
    lookup_min_reads: 1
)");
  auto create = request(R"({"create": "product_view", "$db": "shop", "viewOn": "products",
                            "pipeline": [{"$lookup": {"from": "reviews", "as": "r"}}]})");
  EXPECT_TRUE(inspect(*create).violations.empty());
  auto find_view = request(R"({"find": "product_view", "$db": "shop", "filter": {}})");
  Verdict v = inspect(*find_view);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(measurements.lookups["reviews"], 1);

  auto explain = request(R"({"explain": {"aggregate": "orders", "pipeline": [
                              {"$facet": {"x": [{"$graphLookup": {"from": "people", "as": "p"}}]}}],
                              "cursor": {}}, "$db": "shop"})");
  v = inspect(*explain);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(measurements.lookups["people"], 1);
  EXPECT_EQ(measurements.reads["shop.orders"], 1);
}

// A view is known by its database and name apart: database "a.b" with view "c" is not database
// "a" with collection "b.c", whose reads join nothing.
TEST_F(EngineTest, AViewIsNotAnotherNamespaceWhoseNamesJoinToTheSameText) {
  use(R"(
rules:
  - match: "*"
    max_lookup_ratio: 0.1
    lookup_min_reads: 1
)");
  auto create = request(R"({"create": "c", "$db": "a.b", "viewOn": "products",
                            "pipeline": [{"$lookup": {"from": "reviews", "as": "r"}}]})");
  EXPECT_TRUE(inspect(*create).violations.empty());
  auto other = request(R"({"find": "b.c", "$db": "a", "filter": {}})");
  EXPECT_TRUE(inspect(*other).violations.empty());
  EXPECT_EQ(measurements.lookups["reviews"], 0);
  auto view = request(R"({"find": "c", "$db": "a.b", "filter": {}})");
  EXPECT_EQ(inspect(*view).violations.size(), 1u);
  EXPECT_EQ(measurements.lookups["reviews"], 1);
}

TEST_F(EngineTest, BulkWriteJudgesEachOpInItsNamespace) {
  use(kShopRules);
  auto m = request(R"({"bulkWrite": 1, "$db": "admin", "ordered": false,
                       "nsInfo": [{"ns": "shop.orders"}, {"ns": "shop.products"}]})",
                   "ops",
                   {R"({"insert": 0, "document": {"list": )" + int_array(101) + "}}",
                    R"({"insert": 1, "document": {"list": )" + int_array(101) + "}}",
                    R"({"update": 1, "filter": {"_id": 1}, "updateMods": {"$push": {"a": 1}}})"});
  Verdict v = inspect(*m);
  ASSERT_EQ(v.violations.size(), 2u);
  EXPECT_EQ(v.violations[0].statement_index, 1);
  EXPECT_EQ(v.violations[1].statement_index, 2);
  EXPECT_EQ(v.violations[1].kind, RuleKind::kRequirePushSlice);
  // Per op, like insert/update batches: ops 1 and 2 are refused, op 0 goes through.
  EXPECT_FALSE(v.block_command);
  EXPECT_EQ(v.blocked_statements, (std::vector<int32_t>{1, 2}));
  // Ordered: the batch stops at op 1, so op 2 is neither judged nor refused.
  auto ordered =
      request(R"({"bulkWrite": 1, "$db": "admin", "ordered": true,
                             "nsInfo": [{"ns": "shop.orders"}, {"ns": "shop.products"}]})",
              "ops",
              {R"({"insert": 1, "document": {"list": )" + int_array(101) + "}}",
               R"({"update": 1, "filter": {"_id": 1}, "updateMods": {"$push": {"a": 1}}})"});
  EXPECT_EQ(inspect(*ordered).blocked_statements, std::vector<int32_t>{0});
}

TEST_F(EngineTest, ReloadKeepsCountersAndAppliesNewRules) {
  use("rules:\n  - match: '*'\n    max_array_length: 2\n");
  auto m = request(R"({"insert": "c", "$db": "d", "documents": [{"a": [1, 2, 3]}]})");
  EXPECT_EQ(inspect(*m).violations.size(), 1u);
  engine->reload(rules("rules:\n  - match: '*'\n    action: block\n    max_array_length: 10\n"));
  EXPECT_TRUE(inspect(*m).violations.empty());
  const std::string status = engine->status_json();
  EXPECT_NE(status.find("\"max_array_length\":{\"warn\":1,\"block\":0}"), std::string::npos)
      << status;
  EXPECT_NE(status.find("\"commands\":2"), std::string::npos) << status;
  engine->reload(rules("rules:\n  - match: '*'\n    action: block\n    max_array_length: 1\n"));
  Verdict v = inspect(*m);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_TRUE(v.any_block());
}

TEST_F(EngineTest, NamespacesBeyondTheBoundShareTheOverflowBucketButRulesStillApply) {
  use(R"(
rules:
  - match: "d.second"
    max_array_length: 1
tracking:
  max_namespaces: 1
)");
  auto first = request(R"({"insert": "first", "$db": "d", "documents": [{"a": [1, 2]}]})");
  auto second = request(R"({"insert": "second", "$db": "d", "documents": [{"a": [1, 2]}]})");
  EXPECT_TRUE(inspect(*first).violations.empty());
  EXPECT_EQ(inspect(*second).violations.size(), 1u);
  EXPECT_EQ(measurements.commands["_other._other:insert"], 1);
  EXPECT_EQ(measurements.violations["_other._other:max_array_length:warn"], 1);
  EXPECT_NE(engine->status_json().find("\"namespace\":\"_other._other\""), std::string::npos);
}

TEST_F(EngineTest, FieldPathsBeyondTheBoundAreOther) {
  use("rules: []\ntracking:\n  max_field_paths: 2\n");
  auto m =
      request(R"({"insert": "c", "$db": "d", "documents": [{"a": [1], "b": [1], "c": [1, 2]}]})");
  inspect(*m);
  EXPECT_EQ(measurements.arrays.count("a"), 1u);
  EXPECT_EQ(measurements.arrays.count("b"), 1u);
  EXPECT_EQ(measurements.arrays.count("c"), 0u);
  EXPECT_EQ(measurements.arrays["_other"], 2);
}

TEST_F(EngineTest, SampledReadsFeedStatsAndTheTracker) {
  use("rules:\n  - match: '*'\n    max_array_length: 5\ntracking:\n  read_sample_rate: 1\n");
  auto find = request(R"({"find": "c", "$db": "d", "filter": {}})");
  EXPECT_TRUE(engine->wants_reply_sample(find->cmd));
  auto reply = request(R"({"cursor": {"id": 0, "ns": "d.c", "firstBatch": [
                             {"_id": 1, "tags": [1, 2, 3, 4, 5]}, {"_id": 2}]}, "ok": 1})");
  engine->observe_reply(find->cmd, reply->msg);
  ASSERT_EQ(measurements.sizes.size(), 2u);
  EXPECT_EQ(measurements.sizes[0].first, "read_sample");
  EXPECT_EQ(tracked_documents(*engine), 1u);
  auto push = request(R"({"update": "c", "$db": "d", "updates": [
                           {"q": {"_id": 1}, "u": {"$push": {"tags": 6}}}]})");
  Verdict v = inspect(*push);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(v.violations[0].kind, RuleKind::kTrackedArrayLength);
  EXPECT_EQ(v.violations[0].measured, 6);
  EXPECT_NE(engine->status_json().find("\"sampled_document_bytes\":{\"count\":2"),
            std::string::npos);
}

TEST_F(EngineTest, SampleRateZeroNeverSamples) {
  use("tracking:\n  read_sample_rate: 0\n");
  auto find = request(R"({"find": "c", "$db": "d"})");
  EXPECT_FALSE(engine->wants_reply_sample(find->cmd));
}

TEST_F(EngineTest, StatusJsonReportsDistributionsAndOffenders) {
  use(kShopRules);
  auto m = request(R"({"insert": "products", "$db": "shop", "documents": [
                        {"_id": 1, "list": )" +
                   int_array(150) + "}]}");
  inspect(*m);
  const std::string s = engine->status_json();
  EXPECT_NE(s.find("\"namespace\":\"shop.products\""), std::string::npos) << s;
  EXPECT_NE(s.find("\"list\":{\"count\":1"), std::string::npos) << s;
  EXPECT_NE(s.find("{\"app\":\"test-app\",\"violations\":2}"), std::string::npos) << s;
}

TEST_F(EngineTest, WarnLogsAreRateLimitedPerRuleAndNamespaceAndCarryNoValues) {
  use("rules:\n  - match: '*'\n    max_array_length: 1\n");
  std::ostringstream out;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(out)));
  auto m = request(R"({"insert": "c", "$db": "d", "documents": [{"secret": ["s3cr3t", "x"]}]})");
  for (int i = 0; i < 5; ++i) EXPECT_EQ(inspect(*m).violations.size(), 1u);
  auto other = request(R"({"insert": "c2", "$db": "d", "documents": [{"a": [1, 2]}]})");
  inspect(*other);
  spdlog::set_default_logger(previous);
  const std::string log = out.str();
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 2) << log;
  EXPECT_NE(log.find("rule=max_array_length action=warn ns=d.c field=secret measured=2 bound=1"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("app=test-app"), std::string::npos) << log;
  EXPECT_EQ(log.find("s3cr3t"), std::string::npos) << log;
  EXPECT_EQ(measurements.violations["d.c:max_array_length:warn"], 5);  // counted, even unlogged
}

TEST_F(EngineTest, ConcurrentInspectionKeepsExactCounts) {
  use("rules:\n  - match: '*'\n    max_array_length: 1\n");
  auto m = request(R"({"insert": "c", "$db": "d", "documents": [{"_id": 1, "a": [1, 2]}]})");
  auto find = request(R"({"aggregate": "c", "$db": "d", "cursor": {}, "pipeline": [
                           {"$lookup": {"from": "x", "as": "x"}}]})");
  spdlog::level::level_enum level = spdlog::get_level();
  spdlog::set_level(spdlog::level::off);
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        engine->inspect(m->cmd, kCtx);
        engine->inspect(find->cmd, kCtx);
        if (i % 100 == 0) engine->status_json();
      }
    });
  }
  for (auto& t : threads) t.join();
  spdlog::set_level(level);
  const std::string s = engine->status_json();
  EXPECT_NE(s.find("\"commands\":4000"), std::string::npos) << s;
  EXPECT_NE(s.find("\"max_array_length\":{\"warn\":2000,\"block\":0}"), std::string::npos) << s;
  EXPECT_NE(s.find("\"reads_with_lookup_total\":2000"), std::string::npos) << s;
}

TEST(ExampleConfigTest, TheAnnotatedExampleParses) {
  const std::string path = std::string(DOCGUARD_SOURCE_DIR) + "/config/docguard.example.yaml";
  auto set = parse_rules(YAML::LoadFile(path), path);
  EXPECT_EQ(set->rules().size(), 6u);
  EXPECT_EQ(set->mode(), Action::kWarn);
  EXPECT_TRUE(set->has_scoped_rules());
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

TEST_F(EngineTest, EachEngineKeepsItsOwnNamespaceStatistics) {
  // A thread remembers the namespace it looked up last; a second engine on the same thread (a
  // test, or an engine built after another was destroyed) must not see the first one's.
  use("rules:\n  - match: '*'\n    max_array_length: 100\n");
  auto insert = request(R"({"insert": "c", "$db": "d", "documents": [{"_id": 1, "a": [1]}]})");
  inspect(*insert);
  inspect(*insert);
  EXPECT_NE(engine->status_json().find("\"document_bytes\":{\"count\":2"), std::string::npos);
  Engine other(rules("rules:\n  - match: '*'\n    max_array_length: 100\n"), nullptr, nullptr);
  other.inspect(insert->cmd, kCtx);
  EXPECT_NE(other.status_json().find("\"document_bytes\":{\"count\":1"), std::string::npos);
  inspect(*insert);
  EXPECT_NE(engine->status_json().find("\"document_bytes\":{\"count\":3"), std::string::npos);
  use("rules:\n  - match: '*'\n    max_array_length: 100\n");  // a new engine
  inspect(*insert);
  EXPECT_NE(engine->status_json().find("\"document_bytes\":{\"count\":1"), std::string::npos);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
