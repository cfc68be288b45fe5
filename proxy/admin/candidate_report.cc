// The candidate rules' part of the live report: docguard's advisor renders the report, and the
// proxy, which holds both the advisor and the rules engine, adds what the candidate rules would
// have done.
#include "docguard/advisor/text_format.h"
#include "docguard/base/json_writer.h"
#include "docguard/proxy/admin_server.h"

namespace docguard::proxy {

namespace {

const std::string& name_of(const rules::CandidateVerdicts& v) {
  return v.id.empty() ? v.key : v.id;
}

}  // namespace

std::string candidate_verdicts_json(const std::vector<rules::CandidateVerdicts>& verdicts) {
  // [{"rule": id or key, "id", "key", "line", "apps": [{"app", "would_block", "would_warn"}]}]
  json::Writer w;
  w.begin_array();
  for (const auto& v : verdicts) {
    w.begin_object().member("rule", name_of(v)).key("id");
    if (v.id.empty()) {
      w.null();
    } else {
      w.value(v.id);
    }
    w.member("key", v.key).member("line", v.line).key("apps").begin_array();
    for (const auto& app : v.apps) {
      w.begin_object().member("app", app.app).member("would_block", app.would_block);
      w.member("would_warn", app.would_warn).end_object();
    }
    w.end_array().end_object();
  }
  w.end_array();
  return w.take();
}

advisor::ReportSection candidate_verdicts_section(
    const std::vector<rules::CandidateVerdicts>& verdicts) {
  advisor::ReportSection section;
  section.json_members = {{"candidate_verdicts", candidate_verdicts_json(verdicts)}};
  if (verdicts.empty()) return section;
  using advisor::html_escape;
  std::string table =
      "<h2>Candidate rules</h2><p class='muted'>What the rules under <code>candidate_rules</code> "
      "would have done to the traffic so far; nothing was blocked or changed.</p><table><tr>"
      "<th>rule</th><th>line</th><th>app</th><th>would block</th><th>would warn</th></tr>";
  for (const auto& v : verdicts) {
    const std::string rule = "<td><code>" + html_escape(name_of(v)) + "</code></td><td>" +
                             std::to_string(v.line) + "</td>";
    if (v.apps.empty()) {
      table += "<tr>" + rule + "<td class='muted'>none yet</td><td>0</td><td>0</td></tr>";
    }
    for (const auto& a : v.apps) {
      table += "<tr>" + rule + "<td>" + html_escape(a.app.empty() ? "(no app name)" : a.app) +
               "</td><td>" + std::to_string(a.would_block) + "</td><td>" +
               std::to_string(a.would_warn) + "</td></tr>";
    }
  }
  table += "</table>";
  section.html = std::move(table);
  return section;
}

}  // namespace docguard::proxy
