// One row per rule kind: what every layer outside the kind's own check needs to know about it.
// Its name is the YAML key, the metric label, errInfo's `rule` and the log field; the advisor's
// finding for it is "rule:<name>"; a block-mode refusal is written in the row's refusal style.
//
// Adding a rule kind: its check (rules/), its RuleKind value (collection_stats.h), its row in
// rule_kinds.cc and its YAML key (settings/rules_yaml.cc). conversation/ and advisor/ read the row
// and need no change; a kind a stored document can break also needs its finding kind
// (advisor/finding.h): without one its findings are not filed (never under another kind's name),
// and the advisor's tests fail.
#pragma once

#include <string>
#include <string_view>

#include "docguard/rules/collection_stats.h"

namespace docguard::rules {

struct Violation;

// Which error document a block-mode refusal is.
enum class RefusalStyle : uint8_t {
  kDesignRule,          // 121 DocumentValidationFailure with docguard's errInfo {rule, match, ...}
  kDocumentValidation,  // 121 with the server's own validation errInfo ($jsonSchema details)
  kNoIndex,             // 291 NoQueryExecutionPlans, as the server's notablescan refuses
};

struct RuleKindRow {
  RuleKind kind;
  const char* name;
  RefusalStyle refusal;
  // Whether a stored document can break it, so that `docguard scan` reports a finding for it.
  bool judged_on_documents;
  // The design rule's words after "violated: " (kDesignRule only; null for the others, whose
  // error documents write the server's own message).
  std::string (*describe)(const Violation& v, std::string_view field_path);
};

// The kind's row; RuleKind::kCount (or any value past it) gets a row named "?".
const RuleKindRow& rule_kind(RuleKind kind);
inline const char* rule_name(RuleKind kind) { return rule_kind(kind).name; }

}  // namespace docguard::rules
