// The candidate rules' part of the live report: docguard's advisor renders the report, and the
// proxy, which holds both the advisor and the rules engine, adds what the candidate rules would
// have done.
#include <fmt/format.h>

#include "docguard/advisor/text_format.h"
#include "docguard/base/json_string.h"
#include "docguard/proxy/admin_server.h"

namespace docguard::proxy {

namespace {

const std::string& name_of(const rules::CandidateVerdicts& v) {
  return v.id.empty() ? v.key : v.id;
}

}  // namespace

std::string candidate_verdicts_json(const std::vector<rules::CandidateVerdicts>& verdicts) {
  // [{"rule": id or key, "id", "key", "line", "apps": [{"app", "would_block", "would_warn"}]}]
  std::string out = "[";
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const auto& v = verdicts[i];
    if (i > 0) out.push_back(',');
    out += "{\"rule\":";
    json::append_string(out, name_of(v));
    out += ",\"id\":";
    if (v.id.empty()) {
      out += "null";
    } else {
      json::append_string(out, v.id);
    }
    out += ",\"key\":";
    json::append_string(out, v.key);
    fmt::format_to(std::back_inserter(out), ",\"line\":{},\"apps\":[", v.line);
    for (size_t j = 0; j < v.apps.size(); ++j) {
      if (j > 0) out.push_back(',');
      out += "{\"app\":";
      json::append_string(out, v.apps[j].app);
      fmt::format_to(std::back_inserter(out), ",\"would_block\":{},\"would_warn\":{}}}",
                     v.apps[j].would_block, v.apps[j].would_warn);
    }
    out += "]}";
  }
  out += "]";
  return out;
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
