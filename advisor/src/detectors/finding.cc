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
  // A rule's finding is named after it ("rule:max_document_bytes"): the rule table's name.
  const rules::RuleKindRow& row = rules::rule_kind(rule);
  if (!row.judged_on_documents) return std::nullopt;
  return kFindingKindNames.value(std::string("rule:") + row.name);
}

void sort_findings(std::vector<Finding>& findings) {
  // By the kind's name, not its value: reports list findings in the order they always had.
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    return std::forward_as_tuple(a.db, a.collection, std::string_view(kind_name(a.kind)), a.field) <
           std::forward_as_tuple(b.db, b.collection, std::string_view(kind_name(b.kind)), b.field);
  });
}

}  // namespace docguard::advisor
