#include "docguard/advisor/limit_forecasts.h"

#include <cmath>
#include <cstdio>

#include "docguard/advisor/document_id.h"
#include "docguard/advisor/text_format.h"

namespace docguard::advisor {
namespace {

std::string number(double value, const char* format = "%.3g") {
  char text[48];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// The pattern that stops the growth. One document growing far faster than the field's others
// is an outlier; elements that make the document large are read with it every time (subset);
// otherwise the field grows the same way in many documents, which is what buckets are for.
// Keeping only the latest elements ($push with $each and $slice) fits each when older ones
// need not be kept.
void choose_pattern(ApproachingLimit& row) {
  const std::string field = "`" + row.field + "`";
  const bool outlier = row.growing_documents == 1 || row.rate >= 10 * row.namespace_rate;
  const bool size_limit = row.limit != "array_length";
  if (outlier) {
    row.pattern = "outlier";
    row.suggestion = "_id " + row.id + " grows " + field +
                     " much faster than the collection's other documents: keep the first " +
                     "elements in the document and move the overflow to linked overflow " +
                     "documents (has_extras: true), or push with $each and $slice if only the " +
                     "latest elements matter.";
  } else if (size_limit) {
    row.pattern = "subset";
    row.suggestion = "The elements of " + field + " make the documents large: keep the latest " +
                     "few in the document ($push with $each and $slice) and the full list in a " +
                     "collection of its own, one document per element, referencing the parent.";
  } else {
    row.pattern = "bucket";
    row.suggestion = field + " grows steadily in " + with_commas(row.growing_documents) +
                     " documents: move its elements to a bucket collection (one document per " +
                     "parent and span of time or count, e.g. 200 elements), or push with $each " +
                     "and $slice if only the latest elements matter.";
  }
}

}  // namespace

std::string eta_text(double seconds) {
  if (seconds <= 0) return "now";
  if (seconds < 120) return number(seconds, "%.0f") + " s";
  if (seconds < 2 * 3600) return number(seconds / 60, "%.1f") + " min";
  if (seconds < 2 * 86400) return number(seconds / 3600, "%.1f") + " h";
  return number(seconds / 86400, "%.1f") + " days";
}

std::vector<ApproachingLimit> approaching_limits(const std::vector<rules::PathForecast>& forecasts,
                                                 const AdvisorSettings& settings, size_t max) {
  std::vector<ApproachingLimit> rows;
  for (const rules::PathForecast& f : forecasts) {
    if (rows.size() >= max) break;
    ApproachingLimit& row = rows.emplace_back(ApproachingLimit{
        .db = f.db,
        .collection = f.coll,
        .field = f.field,
        .limit = rules::limit_name(f.limit),
        .bound = f.bound,
        .eta_seconds = f.eta_seconds,
        .rate = f.rate,
        .bytes_per_second = f.bytes_per_second,
        .length = f.length,
        .namespace_rate = f.namespace_rate,
        .growing_documents = f.growing_documents,
        .id = f.id.empty() ? "(unknown)"
                           : document_id_text(f.id.data(), static_cast<uint32_t>(f.id.size())),
        .apps = {},  // the live advisor adds the apps that grow the field
        .within_horizon = f.eta_seconds < settings.forecast_horizon,
        .pattern = {},  // pattern and suggestion: choose_pattern() below
        .suggestion = {},
    });
    choose_pattern(row);
  }
  return rows;
}

Finding approaching_limit_finding(const ApproachingLimit& row, const AdvisorSettings& settings) {
  Finding f;
  f.db = row.db;
  f.collection = row.collection;
  f.kind = Finding::Kind::kApproachingLimit;
  f.severity = Severity::kWarn;
  f.field = row.field;
  const bool bytes = row.limit != "array_length";
  const std::string bound = bytes ? human_bytes(static_cast<uint64_t>(row.bound))
                                  : with_commas(static_cast<uint64_t>(row.bound)) + " elements";
  f.evidence =
      "`" + row.field + "` of _id " + row.id + " reaches the " + row.limit + " limit (" + bound +
      ") in about " + eta_text(row.eta_seconds) + ": " +
      with_commas(static_cast<uint64_t>(row.length)) + " elements now, growing " +
      number(row.rate) + " elements/s" +
      (bytes ? " (" + human_bytes(static_cast<uint64_t>(row.bytes_per_second)) + "/s)" : "") +
      "; " + with_commas(row.growing_documents) + " growing documents, median of the " +
      "fastest " + number(row.namespace_rate) + " elements/s (horizon " +
      eta_text(settings.forecast_horizon) + ")";
  f.pattern = row.pattern;
  f.suggestion = row.suggestion;
  f.source = "traffic";
  f.apps = row.apps;
  return f;
}

namespace {

std::string bound_text(const ApproachingLimit& row) {
  return row.limit == "array_length" ? with_commas(static_cast<uint64_t>(row.bound)) + " elements"
                                     : human_bytes(static_cast<uint64_t>(row.bound));
}

std::string apps_text(const std::vector<std::string>& apps) {
  std::string out;
  for (size_t i = 0; i < apps.size(); ++i) out += (i ? ", " : "") + apps[i];
  return out;
}

}  // namespace

void write_approaching_limits(json::Writer& w, const std::vector<ApproachingLimit>& rows) {
  w.begin_array();
  for (const ApproachingLimit& r : rows) {
    w.begin_object()
        .member("db", r.db)
        .member("collection", r.collection)
        .member("field", r.field)
        .member("limit", r.limit)
        .member("bound", r.bound)
        .member("eta_seconds", r.eta_seconds)
        .member("elements_per_second", r.rate)
        .member("bytes_per_second", r.bytes_per_second)
        .member("length", r.length)
        .member("namespace_elements_per_second", r.namespace_rate)
        .member("growing_documents", r.growing_documents)
        .member("_id", r.id)
        .member("within_horizon", r.within_horizon)
        .member("pattern", r.pattern)
        .member("suggestion", r.suggestion)
        .key("apps")
        .begin_array();
    for (const std::string& app : r.apps) w.value(app);
    w.end_array().end_object();
  }
  w.end_array();
}

std::string approaching_limits_text(const std::vector<ApproachingLimit>& rows) {
  if (rows.empty()) return "";
  std::string out = "\napproaching limits (soonest first):\n";
  for (const ApproachingLimit& r : rows) {
    out += std::string("  ") + (r.within_horizon ? "WARN  " : "      ") + r.db + "." +
           r.collection + " `" + r.field + "` " + r.limit + " (" + bound_text(r) + ") in " +
           eta_text(r.eta_seconds) + ", _id " + r.id + ", " + number(r.rate) +
           " elements/s; pattern: " + r.pattern +
           (r.apps.empty() ? "" : "; apps: " + apps_text(r.apps)) + "\n";
  }
  return out;
}

std::string approaching_limits_html(const std::vector<ApproachingLimit>& rows) {
  if (rows.empty()) return "";
  std::string out =
      "<h2 id='approaching-limits'>Approaching limits (" + std::to_string(rows.size()) +
      ")</h2><table><tr><th>in</th><th>namespace</th><th>field</th><th>limit</th>"
      "<th>growth</th><th>fastest _id</th><th>apps</th><th>pattern</th><th>suggestion</th></tr>";
  for (const ApproachingLimit& r : rows) {
    out += std::string("<tr><td class='sev ") + (r.within_horizon ? "warn" : "info") + "'>" +
           html_escape(eta_text(r.eta_seconds)) + "</td><td>" +
           html_escape(r.db + "." + r.collection) + "</td><td><code>" + html_escape(r.field) +
           "</code></td><td>" + html_escape(r.limit) + " (" + html_escape(bound_text(r)) +
           ")</td><td>" + html_escape(number(r.rate)) + " elements/s, " +
           with_commas(static_cast<uint64_t>(r.length)) + " now</td><td><code>" +
           html_escape(r.id) + "</code></td><td>" + html_escape(apps_text(r.apps)) + "</td><td>" +
           html_escape(r.pattern) + "</td><td>" + html_escape(r.suggestion) + "</td></tr>";
  }
  return out + "</table>";
}

}  // namespace docguard::advisor
