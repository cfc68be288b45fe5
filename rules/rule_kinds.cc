#include "docguard/rules/rule_kinds.h"

#include <fmt/format.h>

#include <array>

#include "docguard/rules/verdict.h"

namespace docguard::rules {
namespace {

std::string document_bytes(const Violation& v, std::string_view) {
  return fmt::format("document is {} bytes, bound {}", v.measured, v.bound);
}

std::string array_elements(const Violation& v, std::string_view path) {
  return fmt::format("array '{}' reaches {} elements, bound {}", path, v.measured, v.bound);
}

std::string tracked_array_elements(const Violation& v, std::string_view path) {
  return fmt::format("array '{}' of this document would reach {} elements, bound {}", path,
                     v.measured, v.bound);
}

std::string push_without_slice(const Violation& v, std::string_view path) {
  return fmt::format("'{}' grows without $slice ({} elements added); cap it with $slice", path,
                     v.measured);
}

std::string nesting_depth(const Violation& v, std::string_view) {
  return fmt::format("document nests {} levels, bound {}", v.measured, v.bound);
}

std::string lookup_ratio(const Violation& v, std::string_view) {
  return fmt::format("{:.0f}% of recent reads on this collection use $lookup, bound {:.0f}%",
                     v.measured * 100, v.bound * 100);
}

std::string measured_and_bound(const Violation& v, std::string_view) {
  return fmt::format("measured {}, bound {}", v.measured, v.bound);
}

using enum RefusalStyle;

// In RuleKind's order: rule_kind() indexes it.
constexpr std::array<RuleKindRow, kRuleKindCount> kRows{{
    {RuleKind::kMaxDocumentBytes, "max_document_bytes", kDesignRule, RuleKey::kBytes, 0,
     "rule:max_document_bytes", document_bytes},
    {RuleKind::kMaxArrayLength, "max_array_length", kDesignRule, RuleKey::kCount, 0,
     "rule:max_array_length", array_elements},
    {RuleKind::kArrayLength, "array_length", kDesignRule, RuleKey::kOwnReader, 0,
     "rule:array_length", array_elements},
    {RuleKind::kRequirePushSlice, "require_push_slice", kDesignRule, RuleKey::kOwnReader, 0,
     "rule:require_push_slice", push_without_slice},
    {RuleKind::kMaxNestingDepth, "max_nesting_depth", kDesignRule, RuleKey::kCount, 1000,
     "rule:max_nesting_depth", nesting_depth},
    {RuleKind::kMaxLookupRatio, "max_lookup_ratio", kDesignRule, RuleKey::kRatio, 0,
     "rule:max_lookup_ratio", lookup_ratio},
    // Bounded by the `tracking` section's limits, not by a key of a rule.
    {RuleKind::kTrackedArrayLength, "tracked_array_length", kDesignRule, RuleKey::kNone, 0,
     "rule:tracked_array_length", tracked_array_elements},
    {RuleKind::kJsonSchema, "json_schema", kDocumentValidation, RuleKey::kOwnReader, 0,
     "rule:json_schema", nullptr},
    // Judged on queries in traffic only (a stored document breaks no index rule); its keys are
    // the guardrail's.
    {RuleKind::kRequireIndex, "require_index", kNoIndex, RuleKey::kNone, 0, nullptr, nullptr},
}};

constexpr bool rows_in_order() {
  for (size_t i = 0; i < kRows.size(); ++i) {
    if (static_cast<size_t>(kRows[i].kind) != i) return false;
  }
  return true;
}
static_assert(rows_in_order(), "one row per RuleKind, in its order");

constexpr bool findings_are_named_after_their_rules() {
  for (const RuleKindRow& row : kRows) {
    // A finding is named after its rule, so a report's "rule:x" is the YAML key x.
    const std::string_view finding = row.finding ? row.finding : "";
    if (row.finding && (!finding.starts_with("rule:") || finding.substr(5) != row.name)) {
      return false;
    }
  }
  return true;
}
static_assert(findings_are_named_after_their_rules(), "a finding is \"rule:\" and the rule's name");

constexpr RuleKindRow kUnknownRow{RuleKind::kCount,  "?", kDesignRule, RuleKey::kNone, 0, nullptr,
                                  measured_and_bound};

}  // namespace

const RuleKindRow& rule_kind(RuleKind kind) {
  const auto i = static_cast<size_t>(kind);
  return i < kRows.size() ? kRows[i] : kUnknownRow;
}

}  // namespace docguard::rules
