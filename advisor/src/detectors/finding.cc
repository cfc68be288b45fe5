#include "docguard/advisor/finding.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include "docguard/rules/rule_kinds.h"

namespace docguard::advisor {

const char* severity_name(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarn:
      return "warn";
    case Severity::kBlock:
      return "block";
  }
  return "info";
}

bool parse_severity(std::string_view text, Severity* out) {
  if (text == "info")
    *out = Severity::kInfo;
  else if (text == "warn")
    *out = Severity::kWarn;
  else if (text == "block")
    *out = Severity::kBlock;
  else
    return false;
  return true;
}

std::optional<Finding::Kind> rule_finding_kind(rules::RuleKind rule) {
  if (static_cast<size_t>(rule) >= rules::kRuleKindCount) return std::nullopt;
  if (rules::rule_kind(rule).finding == nullptr) return std::nullopt;
  return static_cast<Finding::Kind>(static_cast<int>(Finding::Kind::kRuleFirst) +
                                    static_cast<int>(rule));
}

const char* kind_name(Finding::Kind kind) {
  const int rule = static_cast<int>(kind) - static_cast<int>(Finding::Kind::kRuleFirst);
  if (rule < 0) return kFindingKindNames.name(kind);
  const rules::RuleKindRow& row = rules::rule_kind(static_cast<rules::RuleKind>(rule));
  return row.finding != nullptr ? row.finding : "?";
}

std::optional<Finding::Kind> finding_kind_named(std::string_view name) {
  if (auto kind = kFindingKindNames.value(name)) return kind;
  for (size_t i = 0; i < rules::kRuleKindCount; ++i) {
    const auto rule = static_cast<rules::RuleKind>(i);
    const char* finding = rules::rule_kind(rule).finding;
    if (finding != nullptr && name == finding) return rule_finding_kind(rule);
  }
  return std::nullopt;
}

void sort_findings(std::vector<Finding>& findings) {
  // By the kind's name, not its value: reports list findings in the order they always had.
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    return std::forward_as_tuple(a.db, a.collection, std::string_view(kind_name(a.kind)), a.field) <
           std::forward_as_tuple(b.db, b.collection, std::string_view(kind_name(b.kind)), b.field);
  });
}

}  // namespace docguard::advisor
