// The whatif report as text, JSON and one self-contained HTML page (the advisor's style sheet
// and escaping, no script), all from the same Judgement.
#include <string>

#include "docguard/advisor/text_format.h"
#include "docguard/base/json_writer.h"
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

void write_refs(json::Writer& w, const std::vector<RequestRef>& refs) {
  w.begin_array();
  for (const RequestRef& ref : refs) {
    w.begin_object().member("connection", ref.connection).member("order", ref.order).end_object();
  }
  w.end_array();
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
  json::Writer w;
  w.begin_object().member("requests", j.requests).member("connections", j.connections);
  w.member("unrecorded", j.unrecorded).member("malformed", j.malformed);
  w.member("guardrail_unknown", j.guardrail_unknown).member("schema_unjudged", j.schema_unjudged);
  w.member("length_unknown", j.length_unknown).member("not_judged", not_judged(j));
  w.member("unverified_files", j.unverified_files).key("refused");
  write_refs(w, j.refused);
  w.key("groups").begin_array();
  for (const Group& g : j.groups) {
    w.begin_object().member("app", g.app).member("rule", g.rule).member("shape", g.shape);
    w.member("outcome", g.refused ? "refused" : "warned").member("count", g.count);
    w.key("examples").begin_array();
    for (const Example& e : g.examples) {
      w.begin_object().member("connection", e.at.connection).member("order", e.at.order);
      w.member("request", e.request).member("detail", e.detail).end_object();
    }
    w.end_array().key("requests");
    write_refs(w, g.requests);
    w.end_object();
  }
  w.end_array().end_object();
  return w.take() + "\n";
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
