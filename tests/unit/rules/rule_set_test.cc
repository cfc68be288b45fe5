#include "docguard/rules/rule_set.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "docguard/rules/rule_kinds.h"
#include "docguard/settings/yaml_settings.h"
#include "rules_yaml.h"

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

using settings::parse_boolean;
using settings::parse_byte_size;
using settings::parse_duration;
using settings::parse_rules;
using testing::error_of;
using testing::parse;

TEST(RuleSetTest, ParsesTheIssueExample) {
  auto rules = parse(R"(
mode: warn
rules:
  - match: "shop.products"
    action: block
    max_document_bytes: 2MiB
    max_array_length: 1000
    array_length: { reviews: 100, "variants.tags": 20 }
    require_push_slice: true
    max_nesting_depth: 20
    max_lookup_ratio: 0.5
    lookup_window: 60s
tracking:
  max_namespaces: 10
  read_sample_rate: 0.5
)");
  ASSERT_EQ(rules->rules().size(), 1u);
  const Rule& r = rules->rules()[0];
  EXPECT_EQ(r.match, "shop.products");
  EXPECT_EQ(r.action, Action::kBlock);
  EXPECT_TRUE(r.action_explicit);
  EXPECT_EQ(*r.bound(RuleKind::kMaxDocumentBytes), 2097152);
  EXPECT_EQ(*r.bound(RuleKind::kMaxArrayLength), 1000);
  ASSERT_EQ(r.array_length.size(), 2u);
  EXPECT_EQ(r.array_length[1].first, "variants.tags");
  EXPECT_EQ(r.array_length[1].second, 20);
  EXPECT_TRUE(r.require_push_slice);
  EXPECT_EQ(*r.bound(RuleKind::kMaxNestingDepth), 20);
  EXPECT_DOUBLE_EQ(*r.bound(RuleKind::kMaxLookupRatio), 0.5);
  EXPECT_EQ(r.lookup_window, std::chrono::seconds(60));
  EXPECT_EQ(rules->tracking().max_namespaces, 10u);
  EXPECT_DOUBLE_EQ(rules->tracking().read_sample_rate, 0.5);
  EXPECT_EQ(rules->tracking().max_tracked_documents, TrackingLimits{}.max_tracked_documents);
}

TEST(RuleSetTest, ExportsItsTopLevelKeys) {
  for (auto key : {"mode", "rules", "tracking"}) {
    EXPECT_NE(std::find(settings::kRuleKeys.begin(), settings::kRuleKeys.end(), key),
              settings::kRuleKeys.end());
  }
}

TEST(RuleSetTest, ByteSizes) {
  EXPECT_EQ(*parse_byte_size("1048576"), 1048576);
  EXPECT_EQ(*parse_byte_size("2MiB"), 2097152);
  EXPECT_EQ(*parse_byte_size("2MB"), 2000000);
  EXPECT_EQ(*parse_byte_size("512 KiB"), 524288);
  EXPECT_EQ(*parse_byte_size("10kb"), 10000);
  EXPECT_EQ(*parse_byte_size("1.5MiB"), 1572864);
  EXPECT_FALSE(parse_byte_size("2XB"));
  EXPECT_FALSE(parse_byte_size("MiB"));
  EXPECT_FALSE(parse_byte_size("-1"));
}

TEST(RuleSetTest, Durations) {
  EXPECT_EQ(*parse_duration("60s"), std::chrono::seconds(60));
  EXPECT_EQ(*parse_duration("5m"), std::chrono::seconds(300));
  EXPECT_EQ(*parse_duration("1h"), std::chrono::seconds(3600));
  EXPECT_EQ(*parse_duration("250ms"), std::chrono::milliseconds(250));
  EXPECT_FALSE(parse_duration("90"));  // a bare number: seconds or milliseconds? refused
  EXPECT_FALSE(parse_duration("soon"));
  EXPECT_EQ(*parse_duration("7d"), std::chrono::hours(7 * 24));
  EXPECT_FALSE(parse_duration("10w"));
  EXPECT_EQ(parse_boolean("Yes"), true);
  EXPECT_EQ(parse_boolean("off"), false);
  EXPECT_FALSE(parse_boolean("1"));
}

TEST(RuleSetTest, NormalizesFieldPaths) {
  EXPECT_EQ(normalize_field_path("variants.tags"), "variants.tags");
  EXPECT_EQ(normalize_field_path("variants.$.tags"), "variants.tags");
  EXPECT_EQ(normalize_field_path("variants.0.tags"), "variants.tags");
  EXPECT_EQ(normalize_field_path("variants.$[].tags"), "variants.tags");
  EXPECT_EQ(normalize_field_path("variants.$[v].tags"), "variants.tags");
}

TEST(RuleSetTest, MissingRulesKeyGivesTheBuiltInDefaults) {
  auto rules = parse("mode: warn\n");
  ASSERT_EQ(rules->rules().size(), 1u);
  EXPECT_EQ(rules->rules()[0].match, "*");
  EXPECT_EQ(*rules->rules()[0].bound(RuleKind::kMaxDocumentBytes), kDefaultMaxDocumentBytes);
  EXPECT_EQ(*rules->rules()[0].bound(RuleKind::kMaxArrayLength), kDefaultMaxArrayLength);
  EXPECT_TRUE(parse("rules: []\n")->rules().empty());
  EXPECT_EQ(parse_rules(YAML::Node(), "<none>")->rules().size(), 1u);
}

TEST(RuleSetTest, ModeIsTheDefaultAction) {
  auto rules = parse(R"(
mode: block
rules:
  - match: "*"
    max_array_length: 10
  - match: "a.*"
    action: off
    max_array_length: 1
)");
  EXPECT_EQ(rules->rules()[0].action, Action::kBlock);
  EXPECT_FALSE(rules->rules()[0].action_explicit);
  EXPECT_EQ(rules->rules()[1].action, Action::kOff);
  // The `off` rule contributes nothing.
  auto limits = rules->resolve("a", "b");
  ASSERT_EQ(limits.limit(RuleKind::kMaxArrayLength).bounds.size(), 1u);
  EXPECT_EQ(limits.limit(RuleKind::kMaxArrayLength).min, 10);
}

TEST(RuleSetTest, StrongestExceededActionThenStrictestBoundWins) {
  auto rules = parse(R"(
rules:
  - match: "shop.*"
    action: warn
    max_array_length: 100
  - match: "shop.products"
    action: block
    max_array_length: 1000
  - match: "other.*"
    action: block
    max_array_length: 1
)");
  auto limits = rules->resolve("shop", "products");
  EXPECT_EQ(limits.limit(RuleKind::kMaxArrayLength).exceeded(50), nullptr);
  const Bound* b = limits.limit(RuleKind::kMaxArrayLength).exceeded(500);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->action, Action::kWarn);
  EXPECT_EQ(b->value, 100);
  EXPECT_EQ(b->match, "shop.*");
  b = limits.limit(RuleKind::kMaxArrayLength).exceeded(5000);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->action, Action::kBlock);
  EXPECT_EQ(b->value, 1000);
  EXPECT_EQ(limits.limit(RuleKind::kMaxArrayLength).strictest()->value, 100);
  // Only shop.* applies to shop.orders.
  EXPECT_EQ(rules->resolve("shop", "orders").limit(RuleKind::kMaxArrayLength).bounds.size(), 1u);
}

TEST(RuleSetTest, LookupRulesBlockOnlyWhenTheRuleSaysSo) {
  auto rules = parse(R"(
mode: block
rules:
  - match: "a.*"
    max_lookup_ratio: 0.5
  - match: "b.*"
    action: block
    max_lookup_ratio: 0.5
    lookup_window: 5m
)");
  EXPECT_EQ(rules->resolve("a", "x").limit(RuleKind::kMaxLookupRatio).bounds[0].action,
            Action::kWarn);
  EXPECT_EQ(rules->resolve("b", "x").limit(RuleKind::kMaxLookupRatio).bounds[0].action,
            Action::kBlock);
  EXPECT_EQ(rules->resolve("b", "x").lookup_window, std::chrono::seconds(300));
}

// The refusal of an unknown key lists every rule kind with a key of its own, from the rule
// table's rows; a kind bounded by a number is read and resolved from its row alone.
TEST(RuleSetTest, AnUnknownKeyListsEveryRuleKindsKey) {
  const std::string e = error_of("rules:\n  - match: a.b\n    shiny: 5\n");
  for (size_t i = 0; i < kRuleKindCount; ++i) {
    const RuleKindRow& row = rule_kind(static_cast<RuleKind>(i));
    if (row.key == RuleKey::kNone) continue;
    EXPECT_NE(e.find(std::string(", ") + row.name + ","), std::string::npos) << row.name << e;
    if (!is_number_key(row.key)) continue;
    // A number's key is read into the rule's bound for the kind, and makes the kind's limit.
    const auto rules = parse(std::string("rules:\n  - match: a.b\n    ") + row.name + ": 1\n");
    EXPECT_EQ(rules->rules()[0].bound(row.kind), 1.0) << row.name;
    EXPECT_EQ(rules->resolve("a", "b").limit(row.kind).bounds.size(), 1u) << row.name;
  }
}

TEST(RuleSetTest, ErrorsNameFileLineAndKey) {
  std::string e = error_of("mode: warn\nrules:\n  - match: a.b\n    max_aray_length: 5\n");
  EXPECT_NE(e.find("test.yaml:4:"), std::string::npos) << e;
  EXPECT_NE(e.find("rules[0].max_aray_length"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown key"), std::string::npos) << e;

  e = error_of("mode: loud\n");
  EXPECT_NE(e.find("test.yaml:1:"), std::string::npos) << e;
  EXPECT_NE(e.find("'mode'"), std::string::npos) << e;
  EXPECT_NE(e.find("expected off, warn or block, got 'loud'"), std::string::npos) << e;

  e = error_of("rules:\n  - match: a.b\n    max_document_bytes: 2 lots\n");
  EXPECT_NE(e.find("test.yaml:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("rules[0].max_document_bytes"), std::string::npos) << e;

  e = error_of("rules:\n  - action: block\n    max_array_length: 3\n");
  EXPECT_NE(e.find("rules[0].match"), std::string::npos) << e;

  e = error_of("rules:\n  - match: a.b\n    array_length: { tags: many }\n");
  EXPECT_NE(e.find("rules[0].array_length.tags"), std::string::npos) << e;

  e = error_of("rules:\n  - match: a.b\n    max_lookup_ratio: 2\n");
  EXPECT_NE(e.find("rules[0].max_lookup_ratio"), std::string::npos) << e;

  e = error_of("rules:\n  - match: a.b\n    lookup_window: forever\n");
  EXPECT_NE(e.find("rules[0].lookup_window"), std::string::npos) << e;

  e = error_of("tracking:\n  max_namespace: 5\n");
  EXPECT_NE(e.find("test.yaml:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("tracking.max_namespace"), std::string::npos) << e;

  e = error_of("tracking:\n  read_sample_rate: 1.5\n");
  EXPECT_NE(e.find("tracking.read_sample_rate"), std::string::npos) << e;

  e = error_of("rules: {match: a}\n");
  EXPECT_NE(e.find("'rules'"), std::string::npos) << e;
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
