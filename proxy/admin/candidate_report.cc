// The candidate rules' part of the live report: docguard's advisor renders the report, and the
// proxy, which holds both the advisor and the rules engine, adds what the candidate rules would
// have done.
#include <fmt/format.h>

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

std::string with_candidate_verdicts_json(std::string report,
                                         const std::vector<rules::CandidateVerdicts>& verdicts) {
  if (report.empty() || report.front() != '{') return report;
  std::string member = "\"candidate_verdicts\":" + candidate_verdicts_json(verdicts);
  // An object with members already: the new one goes first, followed by a comma.
  const size_t next = report.find_first_not_of(" \n\r\t", 1);
  if (next != std::string::npos && report[next] != '}') member += ",";
  report.insert(1, member);
  return report;
}

std::string with_candidate_verdicts_html(std::string report,
                                         const std::vector<rules::CandidateVerdicts>& verdicts) {
  if (verdicts.empty()) return report;
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
  const size_t body_end = report.rfind("</body>");
  report.insert(body_end == std::string::npos ? report.size() : body_end, table);
  return report;
}

}  // namespace docguard::proxy
