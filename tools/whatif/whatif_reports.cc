// The whatif report as text, JSON and one self-contained HTML page (the advisor's style sheet
// and escaping, no script), all from the same Judgement.
#include <string>

#include "docguard/advisor/text_format.h"
#include "docguard/base/json_string.h"
#include "whatif_judgement.h"

namespace docguard::tools::whatif {

namespace {

using advisor::html_escape;
using advisor::with_commas;

std::string ref_text(const RequestRef& r) {
  return "(" + std::to_string(r.connection) + ", " + std::to_string(r.order) + ")";
}

std::string refs_text(const std::vector<RequestRef>& refs) {
  std::string out;
  for (const RequestRef& r : refs) {
    if (!out.empty()) out += " ";
    out += ref_text(r);
  }
  return out;
}

std::string refs_json(const std::vector<RequestRef>& refs) {
  std::string out = "[";
  for (size_t i = 0; i < refs.size(); ++i) {
    if (i > 0) out += ",";
    out += "{\"connection\":" + std::to_string(refs[i].connection) +
           ",\"order\":" + std::to_string(refs[i].order) + "}";
  }
  return out + "]";
}

std::string summary(const Judgement& j) {
  return with_commas(j.requests) + " requests on " + with_commas(j.connections) + " connections; " +
         with_commas(j.refused.size()) + " would be refused, " + with_commas(not_judged(j)) +
         " not judged";
}

// What could not be judged, in words: a count of 0 refused means little beside these.
std::string not_judged_text(const Judgement& j) {
  std::string out = "not judged: " + with_commas(j.guardrail_unknown) +
                    " queries on namespaces with no index facts (a recorded listIndexes or "
                    "--facts-from gives them), " +
                    with_commas(j.schema_unjudged) +
                    " updates a $jsonSchema rule cannot judge without the stored document, " +
                    with_commas(j.length_unknown) +
                    " pushes onto documents whose array length was never seen, " +
                    with_commas(j.unrecorded) + " requests recorded as markers, " +
                    with_commas(j.malformed) + " messages docguard could not read";
  if (j.unverified_files > 0) {
    out += "; " + with_commas(j.unverified_files) + " data files read without a checksum";
  }
  return out;
}

}  // namespace

std::string render_text(const Judgement& j) {
  std::string out = "docguard whatif: " + summary(j) + "\n";
  if (not_judged(j) > 0 || j.unverified_files > 0) out += not_judged_text(j) + "\n";
  if (j.groups.empty()) out += "\nno request breaks a rule\n";
  for (const Group& g : j.groups) {
    out += "\n" + std::string(g.refused ? "REFUSED" : "WARNED") + "  app " +
           (g.app.empty() ? std::string("(none)") : g.app) + "  rule " + g.rule + "  shape " +
           g.shape + "\n  " + with_commas(g.count) + (g.count == 1 ? " request" : " requests") +
           "\n";
    for (const Example& e : g.examples) {
      out += "  example " + ref_text(e.at) + ": " + e.request + "\n";
      if (!e.detail.empty()) out += "    " + e.detail + "\n";
    }
    if (g.refused) out += "  refused (connection, order): " + refs_text(g.requests) + "\n";
  }
  return out;
}

std::string render_json(const Judgement& j) {
  std::string out = "{\"requests\":" + std::to_string(j.requests) +
                    ",\"connections\":" + std::to_string(j.connections) +
                    ",\"unrecorded\":" + std::to_string(j.unrecorded) +
                    ",\"malformed\":" + std::to_string(j.malformed) +
                    ",\"guardrail_unknown\":" + std::to_string(j.guardrail_unknown) +
                    ",\"schema_unjudged\":" + std::to_string(j.schema_unjudged) +
                    ",\"length_unknown\":" + std::to_string(j.length_unknown) +
                    ",\"not_judged\":" + std::to_string(not_judged(j)) +
                    ",\"unverified_files\":" + std::to_string(j.unverified_files) +
                    ",\"refused\":" + refs_json(j.refused) + ",\"groups\":[";
  for (size_t i = 0; i < j.groups.size(); ++i) {
    const Group& g = j.groups[i];
    if (i > 0) out += ",";
    out += "{";
    json::append_string_members(out, {{"app", g.app}, {"rule", g.rule}, {"shape", g.shape}});
    out += std::string(",\"outcome\":\"") + (g.refused ? "refused" : "warned") +
           "\",\"count\":" + std::to_string(g.count) + ",\"examples\":[";
    for (size_t k = 0; k < g.examples.size(); ++k) {
      const Example& e = g.examples[k];
      if (k > 0) out += ",";
      out += "{\"connection\":" + std::to_string(e.at.connection) +
             ",\"order\":" + std::to_string(e.at.order) + ",";
      json::append_string_members(out, {{"request", e.request}, {"detail", e.detail}});
      out += "}";
    }
    out += "],\"requests\":" + refs_json(g.requests) + "}";
  }
  return out + "]}\n";
}

std::string render_html(const Judgement& j) {
  std::string out =
      "<!DOCTYPE html><html><head><meta charset='utf-8'><title>docguard whatif"
      "</title><style>";
  out += advisor::html_report_style();
  out += "</style></head><body><h1>docguard whatif</h1><p>" + html_escape(summary(j)) + "</p>";
  if (not_judged(j) > 0 || j.unverified_files > 0) {
    out += "<p class='muted'>" + html_escape(not_judged_text(j)) + "</p>";
  }
  if (j.groups.empty()) {
    out += "<p>No request breaks a rule.</p>";
  } else {
    out +=
        "<table><tr><th>outcome</th><th>app</th><th>rule</th><th>shape</th><th>requests</th>"
        "<th>examples</th></tr>";
    for (const Group& g : j.groups) {
      out += std::string("<tr><td class='sev ") + (g.refused ? "block'>refused" : "warn'>warned") +
             "</td><td>" + html_escape(g.app) + "</td><td>" + html_escape(g.rule) + "</td><td>" +
             html_escape(g.shape) + "</td><td>" + with_commas(g.count) + "</td><td>";
      for (const Example& e : g.examples) {
        out += "<div><b>" + ref_text(e.at) + "</b> <code>" + html_escape(e.request) +
               "</code><br><span class='muted'>" + html_escape(e.detail) + "</span></div>";
      }
      if (g.refused) {
        out += "<details><summary>(connection, order) of every refusal</summary>" +
               html_escape(refs_text(g.requests)) + "</details>";
      }
      out += "</td></tr>";
    }
    out += "</table>";
  }
  return out + "</body></html>\n";
}

}  // namespace docguard::tools::whatif
