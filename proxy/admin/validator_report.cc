// The $jsonSchema validators' part of the live report: before a validator is enforced, how much
// of the stored data fails it (introspection's sample) and which apps send failing writes.
#include "docguard/advisor/text_format.h"
#include "docguard/base/json_writer.h"
#include "docguard/proxy/admin_server.h"

namespace docguard::proxy {

advisor::ReportSection validators_section(const std::vector<rules::ValidatorCensus>& census) {
  json::Writer members;
  rules::write_validator_census(members, census);
  advisor::ReportSection section;
  section.json_members = {{"validators", members.take()}};
  if (census.empty()) return section;
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
  section.html = std::move(table);
  return section;
}

}  // namespace docguard::proxy
