// The $jsonSchema validators' part of the live report: before a validator is enforced, how much
// of the stored data fails it (introspection's sample) and which apps send failing writes.
#include "docguard/advisor/text_format.h"
#include "docguard/proxy/admin_server.h"

namespace docguard::proxy {

std::string with_validators_json(std::string report,
                                 const std::vector<rules::ValidatorCensus>& census) {
  if (report.empty() || report.front() != '{') return report;
  json::Writer section;
  rules::write_validator_census(section, census);
  std::string member = "\"validators\":" + section.take();
  const size_t next = report.find_first_not_of(" \n\r\t", 1);
  if (next != std::string::npos && report[next] != '}') member += ",";
  report.insert(1, member);
  return report;
}

std::string with_validators_html(std::string report,
                                 const std::vector<rules::ValidatorCensus>& census) {
  if (census.empty()) return report;
  using advisor::html_escape;
  std::string table =
      "<h2>Validators</h2><p class='muted'>Each <code>json_schema</code> rule before it is "
      "enforced: the sampled stored documents that fail it, the properties failing most, and "
      "the writes per app that failed it (a candidate: would have) in the last hour.</p><table>"
      "<tr><th>namespace</th><th>rule</th><th>stored failing / sampled</th><th>failing most</th>"
      "<th>writes failing by app (1 h)</th></tr>";
  for (const auto& c : census) {
    std::string props, apps;
    for (size_t i = 0; i < c.failing_properties.size() && i < 5; ++i) {
      props += (i ? ", " : "") + html_escape(c.failing_properties[i].first) + " (" +
               std::to_string(c.failing_properties[i].second) + ")";
    }
    for (size_t i = 0; i < c.writes_failing_by_app.size() && i < 10; ++i) {
      const std::string& app = c.writes_failing_by_app[i].first;
      apps += (i ? ", " : "") + html_escape(app.empty() ? "(no app name)" : app) + " (" +
              std::to_string(c.writes_failing_by_app[i].second) + ")";
    }
    table += "<tr><td><code>" + html_escape(c.db + "." + c.collection) + "</code></td><td><code>" +
             html_escape(c.rule) + "</code>" + (c.candidate ? " (candidate)" : "") + "</td><td>" +
             std::to_string(c.stored_failing) + " / " + std::to_string(c.stored_sampled) +
             "</td><td>" + props + "</td><td>" + apps + "</td></tr>";
  }
  table += "</table>";
  const size_t body_end = report.rfind("</body>");
  report.insert(body_end == std::string::npos ? report.size() : body_end, table);
  return report;
}

}  // namespace docguard::proxy
