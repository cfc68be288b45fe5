#include "docguard/advisor/finding.h"

#include <algorithm>
#include <tuple>

#include "docguard/advisor/report.h"

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

void sort_findings(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    return std::tie(a.db, a.collection, a.kind, a.field) <
           std::tie(b.db, b.collection, b.kind, b.field);
  });
}

std::string metadata_summary(const CollectionMetadata& metadata) {
  if (!metadata.known) return "indexes and validator unknown";
  std::string validator = metadata.has_validator ? "yes" : "no";
  if (metadata.has_validator && metadata.validation_action == "warn") validator += " (warn only)";
  if (metadata.has_validator && metadata.validation_level == "off") validator += " (off)";
  std::string out =
      (metadata.indexes_known ? std::to_string(metadata.indexes.size()) : std::string("unknown")) +
      " indexes, validator " + validator;
  if (metadata.sample_method == "all") {
    out += ", every document read";
  } else if (!metadata.sample_method.empty()) {
    out += ", sampled by " + metadata.sample_method;
  }
  if (metadata.stats.known) out += ", server count " + std::to_string(metadata.stats.documents);
  for (const std::string& unknown : metadata.unknown) out += "; unknown " + unknown;
  return out;
}

}  // namespace docguard::advisor
