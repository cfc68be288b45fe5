// The workload ledger's part of the live report (Engine::workload_report): the shapes ranked by
// upstream time, as /report.json's `workload` and `workload_overflow` members and a table in
// /report's HTML.
#include <fmt/format.h>

#include "docguard/advisor/text_format.h"
#include "docguard/base/json_string.h"
#include "docguard/proxy/admin_server.h"

namespace docguard::proxy {

namespace {

using rules::WorkloadShape;
using rules::WorkloadVerdict;

void append_index_json(std::string& out, const rules::IndexKeys& keys) {
  out += "{";
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i > 0) out += ",";
    json::append_string(out, keys[i].first);
    out += ":";
    const int direction = rules::index_key_direction(keys[i].second);
    if (direction != 0) {
      out += std::to_string(direction);
    } else {
      json::append_string(out, keys[i].second);
    }
  }
  out += "}";
}

void append_shape_json(std::string& out, const WorkloadShape& shape) {
  const rules::ShapeInfo& info = *shape.info;
  const rules::ShapeStats& s = shape.stats;
  out += "{";
  json::append_string_members(out, {{"db", info.db},
                                    {"collection", info.collection},
                                    {"command", info.command},
                                    {"shape", info.shape}});
  fmt::format_to(std::back_inserter(out),
                 ",\"count\":{},\"total_micros\":{},\"p99_micros\":{},\"documents\":{},"
                 "\"errors\":{},\"verdicts\":{{",
                 s.count, s.micros, s.latency.quantile(0.99), s.documents, s.errors);
  for (size_t v = 0; v < s.verdicts.size(); ++v) {
    fmt::format_to(std::back_inserter(out), "{}\"{}\":{}", v > 0 ? "," : "",
                   rules::workload_verdict_name(static_cast<WorkloadVerdict>(v)), s.verdicts[v]);
  }
  out += "},\"apps\":[";
  for (size_t i = 0; i < s.apps.size(); ++i) {
    out += i > 0 ? ",{\"app\":" : "{\"app\":";
    json::append_string(out, s.apps[i].app);
    fmt::format_to(std::back_inserter(out), ",\"count\":{},\"total_micros\":{}}}", s.apps[i].count,
                   s.apps[i].micros);
  }
  out += "],\"indexed\":";
  out += shape.indexed < 0 ? "null" : shape.indexed > 0 ? "true" : "false";
  out += ",\"index\":";
  if (shape.indexed == 0 && !shape.index.empty()) {
    append_index_json(out, shape.index);
  } else {
    out += "null";
  }
  out += "}";
}

std::string micros_text(uint64_t micros) {
  if (micros < 10'000) return fmt::format("{} µs", micros);
  if (micros < 10'000'000) return fmt::format("{:.1f} ms", static_cast<double>(micros) / 1e3);
  return fmt::format("{:.1f} s", static_cast<double>(micros) / 1e6);
}

}  // namespace

std::string with_workload_json(std::string report, const rules::WorkloadSnapshot& workload) {
  if (report.empty() || report.front() != '{') return report;
  std::string member = "\"workload\":[";
  for (size_t i = 0; i < workload.shapes.size(); ++i) {
    if (i > 0) member += ",";
    append_shape_json(member, workload.shapes[i]);
  }
  fmt::format_to(std::back_inserter(member),
                 "],\"workload_overflow\":{{\"count\":{},\"total_micros\":{},\"max_shapes\":{}}}",
                 workload.overflow.count, workload.overflow.micros, workload.max_shapes);
  const size_t next = report.find_first_not_of(" \n\r\t", 1);
  if (next != std::string::npos && report[next] != '}') member += ",";
  report.insert(1, member);
  return report;
}

std::string with_workload_html(std::string report, const rules::WorkloadSnapshot& workload) {
  using advisor::html_escape;
  std::string table = fmt::format(
      "<h2>Workload</h2><p class='muted'>Query shapes by upstream time (request forwarded to "
      "reply), the heaviest {} kept; {} operations ({}) of other shapes counted as overflow. "
      "The index is the one each unindexed shape needs (equality, sort, range).</p><table><tr>"
      "<th>shape</th><th>namespace</th><th>command</th><th>count</th><th>total</th><th>p99</th>"
      "<th>apps</th><th>indexed?</th><th>index needed</th></tr>",
      workload.max_shapes, workload.overflow.count, micros_text(workload.overflow.micros));
  for (const WorkloadShape& shape : workload.shapes) {
    const rules::ShapeInfo& info = *shape.info;
    std::string apps;
    for (const rules::AppStats& a : shape.stats.apps) {
      apps += (apps.empty() ? "" : ", ") + html_escape(a.app.empty() ? "(no app name)" : a.app) +
              " (" + std::to_string(a.count) + ")";
    }
    const char* indexed = shape.indexed < 0 ? "not known" : shape.indexed > 0 ? "yes" : "no";
    const std::string needed =
        shape.indexed == 0 && !shape.index.empty() ? rules::index_keys_text(shape.index) : "";
    table += fmt::format(
        "<tr><td><code>{}</code></td><td>{}.{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
        html_escape(info.shape), html_escape(info.db), html_escape(info.collection),
        html_escape(info.command), shape.stats.count, micros_text(shape.stats.micros),
        micros_text(shape.stats.latency.quantile(0.99)), apps, indexed, html_escape(needed));
  }
  table += "</table>";
  const size_t body_end = report.rfind("</body>");
  report.insert(body_end == std::string::npos ? report.size() : body_end, table);
  return report;
}

}  // namespace docguard::proxy
