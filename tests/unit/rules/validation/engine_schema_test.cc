// json_schema rules in the engine: configuration keys, whole documents, operator updates judged
// on what they change, unjudged updates counted, candidates and scopes.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <vector>

#include "docguard/rules/engine.h"
#include "docguard/settings/yaml_settings.h"
#include "rules_yaml.h"
#include "test_messages.h"

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

using settings::parse_rules;
using testing::error_of;
using testing::parse;

using testing::Bson;
using testing::Message;
using testing::request;

class Counting : public MeasurementSink {
 public:
  void on_violation(const NamespaceLabels&, std::string_view rule, Action action,
                    std::string_view app) override {
    ++violations[std::string(rule) + ":" + action_name(action) + ":" + std::string(app)];
  }
  void on_candidate_violation(const NamespaceLabels&, std::string_view rule, Action would,
                              std::string_view app) override {
    ++candidates[std::string(rule) + ":" + action_name(would) + ":" + std::string(app)];
  }
  void on_schema_unjudged(const NamespaceLabels& ns) override {
    ++unjudged[std::string(ns.db) + "." + std::string(ns.coll)];
  }
  std::map<std::string, int> violations, candidates, unjudged;
};

constexpr const char* kRules = R"(
mode: warn
rules:
  - id: products-schema
    match: "shop.products"
    action: block
    json_schema:
      bsonType: object
      required: [name, price]
      properties:
        name: { bsonType: string }
        price: { bsonType: number, minimum: 0 }
        sku: { bsonType: string, pattern: "^[A-Z]{3}-[0-9]+$" }
        tags: { bsonType: array, maxItems: 3 }
candidate_rules:
  - id: products-strict
    match: "shop.products"
    action: block
    apps: [web]
    json_schema:
      required: [sku]
)";

std::string details_json(const Violation& v) {
  const std::vector<uint8_t>& details = v.schema_details().details;
  return Bson(codec::BsonView{details.data(), static_cast<uint32_t>(details.size())}).json();
}

class EngineSchemaTest : public ::testing::Test {
 protected:
  void use(const std::string& yaml) {
    engine = std::make_unique<Engine>(parse_rules(YAML::Load(yaml), "test.yaml"), &counts, nullptr);
  }
  Verdict inspect(const Message& m, std::string_view app = "test-app") {
    RequestContext ctx{app, "127.0.0.1:5000"};
    return engine->inspect(m.cmd, ctx);
  }
  Counting counts;
  std::unique_ptr<Engine> engine;
};

// Writes to another collection than the command names: the server validates them against the
// target's validator, docguard cannot see them. Counted as unjudged on the target, never refused.
TEST_F(EngineSchemaTest, WritesElsewhereAreCountedUnjudgedOnTheirTarget) {
  use(kRules);
  const std::vector<const char*> unjudged = {
      R"({"aggregate": "staging", "$db": "shop", "cursor": {}, "pipeline": [{"$out": "products"}]})",
      R"({"aggregate": "staging", "$db": "other", "cursor": {},
          "pipeline": [{"$match": {}}, {"$out": {"db": "shop", "coll": "products"}}]})",
      R"({"aggregate": "staging", "$db": "shop", "cursor": {}, "pipeline": [{"$merge": "products"}]})",
      R"({"aggregate": "staging", "$db": "shop", "cursor": {},
          "pipeline": [{"$merge": {"into": {"db": "shop", "coll": "products"}}}]})",
      R"({"mapReduce": "staging", "$db": "shop", "map": "f", "reduce": "g",
          "out": {"replace": "products"}})",
      R"({"applyOps": [{"op": "i", "ns": "shop.products", "o": {"_id": 1}},
                       {"op": "u", "ns": "shop.products", "o": {"$set": {"a": 1}}, "o2": {"_id": 1}}],
          "$db": "admin"})"};
  int expected = 0;
  for (const char* body : unjudged) {
    auto m = request(body);
    EXPECT_FALSE(inspect(*m).any_block()) << body;
    EXPECT_EQ(counts.unjudged["shop.products"], ++expected) << body;
  }
  for (const char* body :
       {R"({"aggregate": "staging", "$db": "shop", "cursor": {}, "pipeline": [{"$out": "other"}]})",
        R"({"aggregate": "products", "$db": "shop", "cursor": {}, "pipeline": [{"$match": {}}]})",
        R"({"mapReduce": "staging", "$db": "shop", "map": "f", "reduce": "g",
            "out": {"inline": 1}})",
        R"({"applyOps": [{"op": "d", "ns": "shop.products", "o": {"_id": 1}}], "$db": "admin"})"}) {
    auto m = request(body);
    (void)inspect(*m);
    EXPECT_EQ(counts.unjudged["shop.products"], expected) << body;
  }
}

// A field name twice: docguard's matcher and its explanation read the document differently, so
// a failure it cannot explain (no rule named) is passed and counted, never refused with empty
// details.
TEST_F(EngineSchemaTest, AFailureNoRuleExplainsIsNotRefused) {
  use(kRules);
  auto m = request(R"({"insert": "products", "$db": "shop"})", "documents",
                   {R"({"_id": 1, "name": "a", "price": 1, "price": "x"})"});
  const Verdict v = inspect(*m);
  EXPECT_TRUE(v.violations.empty());
  EXPECT_EQ(counts.unjudged["shop.products"], 1);
}

TEST_F(EngineSchemaTest, AnInsertFailingTheSchemaIsBlockedWithTheServersDetails) {
  use(kRules);
  auto m =
      request(R"({"insert": "products", "$db": "shop", "ordered": false})", "documents",
              {R"({"_id": 1, "name": "a", "price": 1})", R"({"_id": 2, "name": "b", "price": "1"})",
               R"({"_id": 3, "name": "c", "price": 2, "sku": "ABC-1"})"});
  Verdict v = inspect(*m);
  ASSERT_EQ(v.violations.size(), 1u);
  const Violation& viol = v.violations[0];
  EXPECT_EQ(viol.kind, RuleKind::kJsonSchema);
  EXPECT_EQ(std::string(rule_name(viol.kind)), "json_schema");
  EXPECT_EQ(viol.statement_index, 1);
  EXPECT_EQ(viol.field_path, "price");
  EXPECT_EQ(v.blocked_statements, std::vector<int32_t>{1});
  EXPECT_EQ(
      details_json(viol),
      R"({ "operatorName" : "$jsonSchema", "schemaRulesNotSatisfied" : [ { "operatorName" : "properties", "propertiesNotSatisfied" : [ { "propertyName" : "price", "details" : [ { "operatorName" : "bsonType", "specifiedAs" : { "bsonType" : "number" }, "reason" : "type did not match", "consideredValue" : "1", "consideredType" : "string" } ] } ] } ] })");
  EXPECT_EQ(counts.violations["json_schema:block:test-app"], 1);
}

TEST_F(EngineSchemaTest, ReplacementsAndUpdatesAreJudged) {
  use(kRules);
  auto replace = request(
      R"({"update": "products", "$db": "shop", "updates": [{"q": {"_id": 1}, "u": {"name": "x"}, "upsert": true}]})");
  Verdict v = inspect(*replace);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_NE(details_json(v.violations[0]).find(R"("missingProperties" : [ "price" ])"),
            std::string::npos);

  auto set = request(
      R"({"update": "products", "$db": "shop", "updates": [{"q": {"_id": 1}, "u": {"$set": {"sku": "nope"}}}]})");
  v = inspect(*set);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(v.violations[0].field_path, "sku");
  EXPECT_EQ(v.blocked_statements, std::vector<int32_t>{0});

  auto unset = request(
      R"({"update": "products", "$db": "shop", "updates": [{"q": {"_id": 1}, "u": {"$unset": {"price": ""}}}]})");
  v = inspect(*unset);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(v.violations[0].field_path, "price");

  auto fine = request(
      R"({"update": "products", "$db": "shop", "updates": [{"q": {"_id": 1}, "u": {"$set": {"price": 3}}}]})");
  EXPECT_TRUE(inspect(*fine).violations.empty());

  // A $push onto an array whose maxItems depends on the stored length: passed and counted.
  auto push = request(
      R"({"update": "products", "$db": "shop", "updates": [{"q": {"_id": 1}, "u": {"$push": {"tags": "x"}}}]})");
  EXPECT_TRUE(inspect(*push).violations.empty());
  EXPECT_EQ(counts.unjudged["shop.products"], 1);
}

TEST_F(EngineSchemaTest, SetOnInsertIsJudgedOnlyWhenTheUpdateMayInsert) {
  use(kRules);
  // Without upsert, $setOnInsert never applies: nothing to judge.
  auto plain = request(
      R"({"update": "products", "$db": "shop", "updates": [{"q": {"_id": 1}, "u": {"$set": {"price": 3}, "$setOnInsert": {"price": "x"}}}]})");
  EXPECT_TRUE(inspect(*plain).violations.empty());
  EXPECT_EQ(counts.unjudged["shop.products"], 0);
  // With upsert it applies only if nothing matches: passed, counted as unjudged.
  auto upsert = request(
      R"({"update": "products", "$db": "shop", "updates": [{"q": {"_id": 1}, "u": {"$setOnInsert": {"price": "x"}}, "upsert": true}]})");
  EXPECT_TRUE(inspect(*upsert).violations.empty());
  EXPECT_EQ(counts.unjudged["shop.products"], 1);
  auto fam = request(
      R"({"findAndModify": "products", "$db": "shop", "query": {"_id": 1}, "update": {"$setOnInsert": {"price": "x"}}, "upsert": true})");
  EXPECT_TRUE(inspect(*fam).violations.empty());
  EXPECT_EQ(counts.unjudged["shop.products"], 2);
}

TEST_F(EngineSchemaTest, AnUpsertWhoseInsertWouldFailIsPassedAndCounted) {
  use(kRules);
  // If it inserts, the server validates {_id: 7, price: 3}: no name. Whether it inserts
  // depends on what is stored: passed, counted once.
  auto lacking = request(
      R"({"update": "products", "$db": "shop", "updates": [{"q": {"_id": 7}, "u": {"$set": {"price": 3}}, "upsert": true}]})");
  EXPECT_TRUE(inspect(*lacking).violations.empty());
  EXPECT_EQ(counts.unjudged["shop.products"], 1);
  // The query's equality gives the name: the image is valid.
  auto complete = request(
      R"({"update": "products", "$db": "shop", "updates": [{"q": {"_id": 8, "name": {"$eq": "n"}}, "u": {"$set": {"price": 3}}, "upsert": true}]})");
  EXPECT_TRUE(inspect(*complete).violations.empty());
  EXPECT_EQ(counts.unjudged["shop.products"], 1);
  // findAndModify's upsert too; without upsert nothing is counted.
  auto fam = request(
      R"({"findAndModify": "products", "$db": "shop", "query": {"_id": 9}, "update": {"$set": {"price": 1}}, "upsert": true})");
  EXPECT_TRUE(inspect(*fam).violations.empty());
  EXPECT_EQ(counts.unjudged["shop.products"], 2);
  auto plain = request(
      R"({"update": "products", "$db": "shop", "updates": [{"q": {"_id": 7}, "u": {"$set": {"price": 3}}}]})");
  EXPECT_TRUE(inspect(*plain).violations.empty());
  EXPECT_EQ(counts.unjudged["shop.products"], 2);
}

TEST_F(EngineSchemaTest, CandidatesCountPerAppAndBlockNothing) {
  use(kRules);
  auto m = request(R"({"insert": "products", "$db": "shop"})", "documents",
                   {R"({"_id": 1, "name": "a", "price": 1})"});
  Verdict web = inspect(*m, "web");
  EXPECT_FALSE(web.any_block());
  EXPECT_EQ(counts.candidates["json_schema:block:web"], 1);
  Verdict other = inspect(*m, "batch");
  EXPECT_FALSE(other.any_block());
  EXPECT_EQ(counts.candidates.count("json_schema:block:batch"), 0u);
}

TEST_F(EngineSchemaTest, OtherNamespacesAreNotJudged) {
  use(kRules);
  auto m = request(R"({"insert": "orders", "$db": "shop"})", "documents", {R"({"_id": 1})"});
  EXPECT_TRUE(inspect(*m).violations.empty());
}

TEST(SchemaConfigTest, AnUnsupportedKeywordIsRefusedWithItsLine) {
  const std::string e = error_of(R"(
rules:
  - match: "shop.users"
    json_schema:
      properties:
        email:
          bsonType: string
          format: email
)");
  EXPECT_NE(e.find("test.yaml:8:"), std::string::npos) << e;
  EXPECT_NE(e.find("rules[0].json_schema.properties.email.format"), std::string::npos) << e;
  EXPECT_NE(e.find("'format' is not supported"), std::string::npos) << e;
  EXPECT_NE(error_of("rules:\n  - match: a.b\n    json_schema: {type: integer}\n").find("integer"),
            std::string::npos);
  EXPECT_NE(error_of("rules:\n  - match: a.b\n    json_schema: [1]\n").find("expected a mapping"),
            std::string::npos);
}

TEST(SchemaConfigTest, YamlScalarsBecomeTheirJsonTypes) {
  auto set = parse_rules(YAML::Load(R"(
rules:
  - match: "a.b"
    json_schema:
      properties:
        n: { enum: [1, 2.5, "3", true, null] }
)"),
                         "test.yaml");
  const auto& schema = *set->rules()[0].json_schema;
  for (const char* ok :
       {R"({"n": 1})", R"({"n": 2.5})", R"({"n": "3"})", R"({"n": true})", R"({"n": null})"}) {
    Bson d(ok);
    EXPECT_TRUE(schema.matches(d.view())) << ok;
  }
  Bson bad(R"({"n": 3})");
  EXPECT_FALSE(schema.matches(bad.view()));
}

TEST(SchemaConfigTest, ReadsTheFileDocguardValidatorWrites) {
  const std::string dir = ::testing::TempDir();
  {
    std::ofstream f(dir + "/products.validator.json");
    f << R"({
  "collMod": "products",
  "validator": {"$jsonSchema": {"bsonType": "object", "required": ["name"], "properties": {"name": {"bsonType": "string"}}}},
  "validationLevel": "moderate",
  "validationAction": "error"
})";
    std::ofstream g(dir + "/bare.json");
    g << R"({"required": ["a"]})";
    std::ofstream h(dir + "/bad.json");
    h << R"({"properties": {"a": {"$ref": "#/x"}}})";
  }
  auto set = parse_rules(YAML::Load(R"(
rules:
  - match: "shop.products"
    json_schema_file: products.validator.json
  - match: "shop.other"
    json_schema_file: bare.json
)"),
                         dir + "/docguard.yaml");
  Bson named(R"({"name": "x"})"), unnamed(R"({"x": 1})");
  EXPECT_TRUE(set->rules()[0].json_schema->matches(named.view()));
  EXPECT_FALSE(set->rules()[0].json_schema->matches(unnamed.view()));
  EXPECT_FALSE(set->rules()[1].json_schema->matches(named.view()));
  const std::string e =
      error_of("rules:\n  - match: a.b\n    json_schema_file: bad.json\n", dir + "/docguard.yaml");
  EXPECT_NE(e.find("properties.a.$ref"), std::string::npos) << e;
  EXPECT_NE(error_of("rules:\n  - match: a.b\n    json_schema_file: missing.json\n",
                     dir + "/docguard.yaml")
                .find("cannot read"),
            std::string::npos);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

TEST_F(EngineSchemaTest, TheCensusCountsSampledStoredDocumentsAndFailingWritesPerApp) {
  use(kRules);
  for (int i = 0; i < 10; ++i) {
    const std::string doc =
        i < 3 ? R"({"_id": )" + std::to_string(i) + R"(, "name": "x"})"
              : R"({"_id": )" + std::to_string(i) + R"(, "name": "x", "price": 1})";
    Bson d(doc);
    engine->learn_stored_document("shop", "products", d.view());
  }
  auto bad = request(R"({"insert": "products", "$db": "shop"})", "documents",
                     {R"({"_id": 1, "name": 5, "price": 1})"});
  inspect(*bad, "web");
  inspect(*bad, "web");
  inspect(*bad, "batch");
  const auto census = engine->validator_census();
  const ValidatorCensus* products = nullptr;
  for (const auto& c : census) {
    if (c.rule == "products-schema") products = &c;
  }
  ASSERT_NE(products, nullptr);
  EXPECT_EQ(products->db, "shop");
  EXPECT_FALSE(products->candidate);
  EXPECT_EQ(products->stored_sampled, 10u);
  EXPECT_EQ(products->stored_failing, 3u);
  ASSERT_EQ(products->failing_properties.size(), 1u);
  EXPECT_EQ(products->failing_properties[0], (std::pair<std::string, uint64_t>{"price", 3}));
  ASSERT_EQ(products->writes_failing_by_app.size(), 2u);
  EXPECT_EQ(products->writes_failing_by_app[0], (std::pair<std::string, uint64_t>{"web", 2}));
  EXPECT_EQ(products->writes_failing_by_app[1], (std::pair<std::string, uint64_t>{"batch", 1}));
  json::Writer writer;
  write_validator_census(writer, census);
  const std::string json = writer.take();
  EXPECT_NE(
      json.find(
          R"("rule":"products-schema","candidate":false,"stored_sampled":10,"stored_failing":3,"failing_properties":{"price":3},"writes_failing_by_app":{"web":2,"batch":1})"),
      std::string::npos)
      << json;
  EXPECT_NE(engine->status_json().find("\"validators\":[{"), std::string::npos);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
