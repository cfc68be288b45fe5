// Rendering of the advisor's findings and profiles as text, JSON, or one self-contained HTML page
// (inline CSS and SVG, no external assets). The input is neutral: the offline scan passes the
// profiles of a dump; the proxy's live /report will pass the profiles fed by traffic, plus the
// $lookup edges it saw.
#pragma once

#include <string>
#include <vector>

#include "docguard/advisor/collection_profile.h"
#include "docguard/advisor/finding.h"
#include "docguard/advisor/limit_forecasts.h"
#include "docguard/advisor/settings.h"
#include "docguard/base/enum_names.h"

namespace docguard::advisor {

// A $lookup seen from one collection into another (for the graph).
struct LookupEdge {
  std::string from_ns;
  std::string to_ns;
  uint64_t count = 0;
};

// A part of a report that another layer adds (the live report's candidate verdicts, validators
// and workload): its JSON members, written after the advisor's own, and its HTML, placed before
// the page ends. Reports are rendered from their sections; nothing is spliced into a rendered
// page.
struct ReportSection {
  std::vector<std::pair<std::string, std::string>> json_members;  // name, its JSON value
  std::string html;
};

struct ReportInput {
  std::string title = "docguard design advisor";
  std::string source;  // the dump path, or "live traffic"
  std::vector<const CollectionProfile*> profiles;
  std::vector<Finding> findings;
  std::vector<LookupEdge> lookups;
  AdvisorSettings settings;
  // Facts that could not be read from the cluster, one line each ("shop.orders: indexes: not
  // authorized (code 13)"): the findings that need them are left out, never guessed.
  std::vector<std::string> unknown_facts;
  // Growing arrays and when they reach their bounds, soonest first (the live report only).
  std::vector<ApproachingLimit> approaching_limits;
  std::vector<ReportSection> sections;  // rendered after the advisor's own parts
};

// "2 indexes, validator no", or that neither is known (a lone .bson file, live traffic).
std::string metadata_summary(const CollectionMetadata& metadata);

std::string render_text(const ReportInput& input);
std::string render_json(const ReportInput& input);
std::string render_html(const ReportInput& input);

enum class ReportFormat { kText, kJson, kHtml };
// The names `scan --format` accepts.
inline constexpr auto kReportFormatNames = base::enum_names<ReportFormat>(
    {{ReportFormat::kText, "text"}, {ReportFormat::kJson, "json"}, {ReportFormat::kHtml, "html"}},
    "text");
std::string render(const ReportInput& input, ReportFormat format);

}  // namespace docguard::advisor
