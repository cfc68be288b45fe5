// The live advisor as the rules engine's advice sink, as the proxy wires it: each traffic
// detector fires on its pattern and stays quiet on the well-designed counterpart.
#include "docguard/advisor/live_advisor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "docguard/rules/engine.h"
#include "docguard/settings/yaml_settings.h"
#include "test_messages.h"

namespace docguard::advisor {
namespace {
namespace DOCGUARD_UNITY_ID {

using testing::request;

AdvisorSettings every_command() {
  AdvisorSettings s;
  s.live_sample_every = 1;
  s.report_missing_validator = false;  // its own test turns it on
  return s;
}

class LiveAdvisorTest : public ::testing::Test {
 protected:
  explicit LiveAdvisorTest(AdvisorSettings s = every_command())
      : advisor(s), engine(settings::parse_rules(YAML::Node(), "<t>"), nullptr, &advisor) {}

  void send(const std::string& body, int times = 1) {
    for (int i = 0; i < times; ++i) {
      auto m = request(body);
      engine.inspect(m->cmd, rules::RequestContext{});
    }
  }
  // A catalog command and the upstream's {ok: 1} reply to it, as the conversation hands them
  // to the engine: indexes and validators are known once the server accepted them.
  void catalog(const std::string& body) {
    auto m = request(body);
    engine.inspect(m->cmd, rules::RequestContext{});
    const std::vector<uint8_t> reply = testing::op_msg(R"({"ok": 1})");
    engine.observe_catalog_reply(m->cmd, codec::OpMsg::parse(reply));
  }
  void insert(const std::string& coll, const std::vector<std::string>& docs) {
    auto m = request(R"({"insert": ")" + coll + R"(", "$db": "app"})", "documents", docs);
    engine.inspect(m->cmd, rules::RequestContext{});
  }
  bool has(const std::string& coll, Finding::Kind kind, const std::string& field = "") {
    const auto f = advisor.findings();
    return std::any_of(f.begin(), f.end(), [&](const Finding& x) {
      return x.collection == coll && x.kind == kind && (field.empty() || x.field == field);
    });
  }

  LiveAdvisor advisor;
  rules::Engine engine;
};

TEST_F(LiveAdvisorTest, UnboundedPushFiresAndSlicedPushDoesNot) {
  send(R"({"update": "posts", "$db": "app", "updates": [{"q": {"_id": 1},
           "u": {"$push": {"comments": {"n": 1}}}}]})",
       12);
  send(R"({"update": "feeds", "$db": "app", "updates": [{"q": {"_id": 1},
           "u": {"$push": {"latest": {"$each": [1], "$slice": -50}}}}]})",
       12);
  EXPECT_TRUE(has("posts", Finding::Kind::kUnboundedArray, "comments"));
  EXPECT_FALSE(has("feeds", Finding::Kind::kUnboundedArray));
}

TEST_F(LiveAdvisorTest, LookupRatioNamesTheJoinFieldsAndTheUnindexedForeignField) {
  const std::string lookup = R"({"aggregate": "orders", "$db": "app", "cursor": {}, "pipeline": [
      {"$lookup": {"from": "customers", "localField": "customerId", "foreignField": "custKey",
                   "as": "c"}}, {"$project": {"total": 1, "c.name": 1}}]})";
  send(lookup, 12);
  send(R"({"find": "orders", "$db": "app", "filter": {"total": 3}})", 2);
  EXPECT_TRUE(has("orders", Finding::Kind::kJoinHeavy, "customerId"));
  const auto f = advisor.findings();
  const auto join = std::find_if(
      f.begin(), f.end(), [](const Finding& x) { return x.kind == Finding::Kind::kJoinHeavy; });
  ASSERT_NE(join, f.end());
  EXPECT_NE(join->suggestion.find("(name)"), std::string::npos) << join->suggestion;
  EXPECT_TRUE(has("customers", Finding::Kind::kUnindexedReference, "custKey"));

  // Indexed, the foreignField is quiet; with most reads plain, the ratio is too.
  catalog(R"({"createIndexes": "customers", "$db": "app",
           "indexes": [{"key": {"custKey": 1}, "name": "custKey_1"}]})");
  send(R"({"find": "orders", "$db": "app", "filter": {"total": 3}})", 20);
  EXPECT_FALSE(has("customers", Finding::Kind::kUnindexedReference));
  EXPECT_FALSE(has("orders", Finding::Kind::kJoinHeavy));
}

TEST_F(LiveAdvisorTest, EqualityFiltersOnAnUnindexedReference) {
  // Spread over query shapes none of which is frequent alone, so only the reference is.
  send(R"({"find": "items", "$db": "app", "filter": {"orderId": 7, "a": 1}})", 6);
  send(R"({"find": "items", "$db": "app", "filter": {"orderId": 7, "b": 1}})", 6);
  send(R"({"find": "lines", "$db": "app", "filter": {"orderId": {"$eq": 7}}})", 12);
  catalog(R"({"createIndexes": "lines", "$db": "app",
           "indexes": [{"key": {"orderId": 1, "n": 1}, "name": "o"}]})");
  send(R"({"find": "notes", "$db": "app", "filter": {"title": "x"}})", 12);  // not a reference
  EXPECT_TRUE(has("items", Finding::Kind::kUnindexedReference, "orderId"));
  EXPECT_FALSE(has("items", Finding::Kind::kUnindexedQuery));
  EXPECT_FALSE(has("lines", Finding::Kind::kUnindexedReference));
  EXPECT_FALSE(has("notes", Finding::Kind::kUnindexedReference));
}

TEST_F(LiveAdvisorTest, RepeatedGroupIsComputedVariedOnesAreNot) {
  send(R"({"aggregate": "sales", "$db": "app", "cursor": {}, "pipeline": [
           {"$group": {"_id": "$shop", "total": {"$sum": "$amount"}}}]})",
       12);
  for (int i = 0; i < 12; ++i) {
    send(R"({"aggregate": "visits", "$db": "app", "cursor": {}, "pipeline": [
             {"$match": {"day": )" +
         std::to_string(i) + R"(}},
             {"$group": {"_id": "$page", "n": {"$sum": 1}}}]})");
  }
  EXPECT_TRUE(has("sales", Finding::Kind::kComputed));
  EXPECT_FALSE(has("visits", Finding::Kind::kComputed));
}

TEST_F(LiveAdvisorTest, CaseInsensitiveRegexInEitherForm) {
  send(
      R"({"find": "users", "$db": "app", "filter": {"email": {"$regex": "^a", "$options": "i"}}})");
  send(R"({"find": "people", "$db": "app", "filter": {"name": {"$regularExpression":
           {"pattern": "^b", "options": "i"}}}})");
  send(R"({"find": "tags", "$db": "app", "filter": {"name": {"$regex": "^c"}}})");
  EXPECT_TRUE(has("users", Finding::Kind::kCaseInsensitiveRegex, "email"));
  EXPECT_TRUE(has("people", Finding::Kind::kCaseInsensitiveRegex, "name"));
  EXPECT_FALSE(has("tags", Finding::Kind::kCaseInsensitiveRegex));
}

TEST_F(LiveAdvisorTest, SubsetNamesTheRarelyReadFields) {
  const std::string big(6000, 'x');
  std::vector<std::string> docs;
  for (int i = 0; i < 5; ++i) {
    docs.push_back(R"({"_id": )" + std::to_string(i) + R"(, "name": "p", "price": 1, "manual": ")" +
                   big + R"("})");
  }
  insert("products", docs);
  insert("articles", docs);
  send(R"({"find": "products", "$db": "app", "filter": {}, "projection": {"name": 1, "price": 1}})",
       12);
  send(R"({"find": "articles", "$db": "app", "filter": {}, "projection": {"name": 1,
           "manual": 1}})",
       12);
  EXPECT_TRUE(has("products", Finding::Kind::kSubset, "manual"));
  EXPECT_FALSE(has("articles", Finding::Kind::kSubset));
}

class LiveBucketTest : public LiveAdvisorTest {
 protected:
  static AdvisorSettings settings() {
    AdvisorSettings s = every_command();
    s.bucket_min_documents = 100;
    return s;
  }
  LiveBucketTest() : LiveAdvisorTest(settings()) {}
};

TEST_F(LiveBucketTest, TinyKeyedTimedInsertsAreABucketCandidate) {
  std::vector<std::string> readings, orders;
  for (int i = 0; i < 200; ++i) {
    readings.push_back(R"({"sensorId": )" + std::to_string(i % 4) + R"(, "ts": {"$date": )" +
                       std::to_string(1700000000000LL + i * 1000) + R"(}, "v": 1})");
    orders.push_back(R"({"_id": )" + std::to_string(i) + R"(, "customer": "c)" + std::to_string(i) +
                     R"(", "lines": ")" + std::string(400, 'l') + R"("})");
  }
  insert("readings", readings);
  insert("orders", orders);
  EXPECT_TRUE(has("readings", Finding::Kind::kBucket, "sensorId"));
  EXPECT_FALSE(has("orders", Finding::Kind::kBucket));
}

class LiveValidatorTest : public LiveAdvisorTest {
 protected:
  static AdvisorSettings settings() {
    AdvisorSettings s = every_command();
    s.report_missing_validator = true;
    return s;
  }
  LiveValidatorTest() : LiveAdvisorTest(settings()) {}
};

TEST_F(LiveValidatorTest, WritesWithoutAKnownValidator) {
  catalog(R"({"create": "checked", "$db": "app", "validator": {"$jsonSchema": {}}})");
  insert("checked", {R"({"a": 1})"});
  insert("loose", {R"({"a": 1})"});
  EXPECT_TRUE(has("loose", Finding::Kind::kNoValidator));
  EXPECT_FALSE(has("checked", Finding::Kind::kNoValidator));
}

TEST_F(LiveAdvisorTest, ReportRendersFindingsAndTheLookupGraph) {
  send(R"({"aggregate": "orders", "$db": "app", "cursor": {}, "pipeline": [
      {"$lookup": {"from": "customers", "localField": "cid", "foreignField": "_id",
                   "as": "c"}}]})",
       12);
  const std::string html = advisor.render(ReportFormat::kHtml);
  EXPECT_NE(html.find("join_heavy"), std::string::npos);
  EXPECT_NE(html.find("$lookup graph"), std::string::npos);
  EXPECT_NE(html.find("app.customers"), std::string::npos);
  const std::string json = advisor.render(ReportFormat::kJson);
  EXPECT_NE(json.find("\"kind\":\"join_heavy\""), std::string::npos);
}

TEST(LiveAdvisorBounds, NamespacesPastTheCapAreNotTracked) {
  AdvisorSettings s = every_command();
  s.live_max_namespaces = 2;
  LiveAdvisor advisor(s);
  for (int i = 0; i < 5; ++i) advisor.on_unbounded_push("app", "c" + std::to_string(i), "a", 1, "");
  for (int i = 0; i < 20; ++i) advisor.on_unbounded_push("app", "c4", "a", 1, "");
  EXPECT_TRUE(advisor.findings().empty());
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::advisor

namespace docguard::advisor {
namespace {
namespace DOCGUARD_UNITY_ID {

// A rule's finding is named after the rule table's row: "rule:" and the rule's name.
TEST(ScanWithConfig, ARuleFindingIsNamedAfterItsRule) {
  for (size_t i = 0; i < static_cast<size_t>(rules::RuleKind::kCount); ++i) {
    const auto rule = static_cast<rules::RuleKind>(i);
    const auto kind = rule_finding_kind(rule);
    if (rules::rule_kind(rule).finding == nullptr) {
      EXPECT_FALSE(kind.has_value()) << rules::rule_name(rule);
      continue;
    }
    ASSERT_TRUE(kind.has_value()) << "no finding kind for " << rules::rule_name(rule);
    EXPECT_EQ(std::string(kind_name(*kind)), std::string("rule:") + rules::rule_name(rule));
    EXPECT_EQ(finding_kind_named(kind_name(*kind)), kind);
  }
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::advisor
