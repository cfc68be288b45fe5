// What the growth forecast means for the design: the rules engine's forecasts of when growing
// arrays reach their bounds (rules::PathForecast) as rows of the report's "approaching limits"
// section, soonest first, each with the pattern that stops the growth, and as
// `approaching_limit` findings for the ones under the horizon (advisor.forecast_horizon).
#pragma once

#include <string>
#include <vector>

#include "docguard/advisor/finding.h"
#include "docguard/advisor/settings.h"
#include "docguard/base/json_writer.h"
#include "docguard/rules/growth_forecast.h"

namespace docguard::advisor {

struct ApproachingLimit {
  std::string db, collection, field;
  std::string limit;  // rules::limit_name(): "array_length", "document_bytes", "16MB"
  double bound = 0;   // elements or bytes
  double eta_seconds = 0;
  double rate = 0;              // the soonest document's elements per second
  double bytes_per_second = 0;  // for size limits
  double length = 0;            // the soonest document's elements now
  double namespace_rate = 0;    // median of the fastest documents of the field
  size_t growing_documents = 0;
  std::string id;                 // the soonest document's _id, shell notation
  std::vector<std::string> apps;  // the apps whose pushes without $slice grow the field
  bool within_horizon = false;
  std::string pattern;  // outlier, bucket, subset (each with $push + $slice as the fallback)
  std::string suggestion;
};

// Rows from the engine's forecasts (already soonest first), at most `max` of them.
std::vector<ApproachingLimit> approaching_limits(const std::vector<rules::PathForecast>& forecasts,
                                                 const AdvisorSettings& settings, size_t max);

// The finding for a row under the horizon.
Finding approaching_limit_finding(const ApproachingLimit& row, const AdvisorSettings& settings);

// The report's section: a JSON array, text lines, an HTML table (empty when there are no rows).
void write_approaching_limits(json::Writer& w, const std::vector<ApproachingLimit>& rows);
std::string approaching_limits_text(const std::vector<ApproachingLimit>& rows);
std::string approaching_limits_html(const std::vector<ApproachingLimit>& rows);

// 90 -> "1.5 min", 5400 -> "1.5 h", 259200 -> "3 days".
std::string eta_text(double seconds);

}  // namespace docguard::advisor
