// A report in the format asked for, and the one-line summary of what is known of a
// collection's metadata that every format prints.
#include "docguard/advisor/report.h"

#include <string>

namespace docguard::advisor {

std::string render(const ReportInput& input, ReportFormat format) {
  switch (format) {
    case ReportFormat::kJson:
      return render_json(input);
    case ReportFormat::kHtml:
      return render_html(input);
    case ReportFormat::kText:
      break;
  }
  return render_text(input);
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
