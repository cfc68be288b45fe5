// The table of rule kinds: one row per kind, names that never repeat, and the refusal each kind
// gets in block mode.
#include "docguard/rules/rule_kinds.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "docguard/rules/engine.h"

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

TEST(RuleKinds, EveryKindHasItsOwnRowAndName) {
  std::set<std::string> names;
  for (size_t i = 0; i < static_cast<size_t>(RuleKind::kCount); ++i) {
    const auto kind = static_cast<RuleKind>(i);
    const RuleKindRow& row = rule_kind(kind);
    EXPECT_EQ(row.kind, kind);
    EXPECT_NE(std::string(row.name), "?");
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    // A design rule says in words what it measured; the others write the server's message.
    EXPECT_EQ(row.describe != nullptr, row.refusal == RefusalStyle::kDesignRule) << row.name;
  }
  EXPECT_STREQ(rule_name(RuleKind::kCount), "?");
}

TEST(RuleKinds, TheServersOwnRefusalsForSchemaAndIndex) {
  EXPECT_EQ(rule_kind(RuleKind::kJsonSchema).refusal, RefusalStyle::kDocumentValidation);
  EXPECT_EQ(rule_kind(RuleKind::kRequireIndex).refusal, RefusalStyle::kNoIndex);
  EXPECT_EQ(rule_kind(RuleKind::kRequireIndex).finding, nullptr);
  EXPECT_STREQ(rule_name(RuleKind::kMaxDocumentBytes), "max_document_bytes");
}

TEST(RuleKinds, ADesignRuleDescribesWhatItMeasured) {
  Violation v;
  v.kind = RuleKind::kMaxArrayLength;
  v.measured = 12;
  v.bound = 10;
  EXPECT_EQ(rule_kind(v.kind).describe(v, "tags"), "array 'tags' reaches 12 elements, bound 10");
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
