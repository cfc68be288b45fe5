// One row per rule kind: what every layer outside the kind's own check needs to know about it.
// Its name is the YAML key, the metric label, errInfo's `rule` and the log field; its finding
// name is what `docguard scan` files stored documents that break it under; a block-mode refusal
// is written in the row's refusal style.
//
// Adding a rule kind: its check (rules/), its value here and its row in rule_kinds.cc. A kind
// bounded by a size or a count needs nothing else: settings/ lists and reads its key from the
// row, the rule set resolves its limit (NamespaceLimits::limit) from the row, and its check reads
// that limit. conversation/ (refusals), advisor/ (findings) and telemetry/ (labels) read the row.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace docguard::rules {

struct Violation;

// Rules as reported in Violation::kind, in a fixed order for counters.
enum class RuleKind : uint8_t {
  kMaxDocumentBytes,
  kMaxArrayLength,
  kArrayLength,
  kRequirePushSlice,
  kMaxNestingDepth,
  kMaxLookupRatio,
  kTrackedArrayLength,
  kJsonSchema,
  kRequireIndex,  // the query guardrail: no known index serves the query
  kCount
};

// Which error document a block-mode refusal is.
enum class RefusalStyle : uint8_t {
  kDesignRule,          // 121 DocumentValidationFailure with docguard's errInfo {rule, match, ...}
  kDocumentValidation,  // 121 with the server's own validation errInfo ($jsonSchema details)
  kNoIndex,             // 291 NoQueryExecutionPlans, as the server's notablescan refuses
};

// How a rule's YAML key named after the kind is read.
enum class RuleKey : uint8_t {
  kNone,       // no key of its own in a rule (the `tracking` section or the guardrail's keys)
  kOwnReader,  // a value of its own shape, read by settings/ (a mapping, a flag, a schema)
  // A number: each rule's is Rule::bound(kind), and a namespace's limit NamespaceLimits::limit
  // (kind): a size's or a count's made by the rule set from the row, a ratio's by its own rule.
  kBytes,  // a size: 16MB, 512KiB, 1000
  kCount,  // a count up to `most`
  kRatio,  // between 0 and 1 (or a percentage)
};

// Whether the key is a number a rule holds in Rule::bound(kind).
constexpr bool is_number_key(RuleKey key) {
  return key == RuleKey::kBytes || key == RuleKey::kCount || key == RuleKey::kRatio;
}

struct RuleKindRow {
  RuleKind kind;
  const char* name;
  RefusalStyle refusal;
  RuleKey key;
  // For kCount: the largest count accepted (0: any).
  double most;
  // The advisor's finding for stored documents that break it ("rule:" and the name); null for a
  // kind no stored document can break (judged on queries in traffic only).
  const char* finding;
  // The design rule's words after "violated: " (kDesignRule only; null for the others, whose
  // error documents write the server's own message).
  std::string (*describe)(const Violation& v, std::string_view field_path);
};

// The kind's row; RuleKind::kCount (or any value past it) gets a row named "?".
const RuleKindRow& rule_kind(RuleKind kind);
inline const char* rule_name(RuleKind kind) { return rule_kind(kind).name; }
inline constexpr size_t kRuleKindCount = static_cast<size_t>(RuleKind::kCount);

}  // namespace docguard::rules
