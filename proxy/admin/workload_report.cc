// The workload ledger's part of the live report (Engine::workload_report): the shapes ranked by
// upstream time, as /report.json's `workload` and `workload_overflow` members and a table in
// /report's HTML.
#include <fmt/format.h>

#include "docguard/advisor/text_format.h"
#include "docguard/base/json_writer.h"
#include "docguard/proxy/admin_server.h"

namespace docguard::proxy {

namespace {

using rules::WorkloadShape;
using rules::WorkloadVerdict;

void write_index(json::Writer& w, const rules::IndexKeys& keys) {
  w.begin_object();
  for (const auto& [field, kind] : keys) {
    const int direction = rules::index_key_direction(kind);
    w.key(field);
    if (direction != 0) {
      w.value(direction);
    } else {
      w.value(kind);
    }
  }
  w.end_object();
}

void write_shape(json::Writer& w, const WorkloadShape& shape) {
  const rules::ShapeInfo& info = *shape.info;
  const rules::ShapeStats& s = shape.stats;
  w.begin_object().member("db", info.db).member("collection", info.collection);
  w.member("command", info.command).member("shape", info.shape);
  w.member("count", s.count).member("total_micros", s.micros);
  w.member("p99_micros", s.latency.quantile(0.99)).member("documents", s.documents);
  w.member("errors", s.errors).member("unserved", s.unserved).key("verdicts").begin_object();
  for (size_t v = 0; v < s.verdicts.size(); ++v) {
    w.member(rules::workload_verdict_name(static_cast<WorkloadVerdict>(v)), s.verdicts[v]);
  }
  w.end_object().key("apps").begin_array();
  for (const rules::AppStats& app : s.apps) {
    w.begin_object().member("app", app.app).member("count", app.count);
    w.member("total_micros", app.micros).end_object();
  }
  w.end_array().key("indexed");
  if (shape.indexed < 0) {
    w.null();
  } else {
    w.value(shape.indexed > 0);
  }
  w.key("index");
  if (shape.indexed == 0 && !shape.index.empty()) {
    write_index(w, shape.index);
  } else {
    w.null();
  }
  w.end_object();
}

std::string micros_text(uint64_t micros) {
  if (micros < 10'000) return fmt::format("{} µs", micros);
  if (micros < 10'000'000) return fmt::format("{:.1f} ms", static_cast<double>(micros) / 1e3);
  return fmt::format("{:.1f} s", static_cast<double>(micros) / 1e6);
}

}  // namespace

advisor::ReportSection workload_section(const rules::WorkloadSnapshot& workload) {
  using advisor::html_escape;
  json::Writer shapes;
  shapes.begin_array();
  for (const WorkloadShape& shape : workload.shapes) write_shape(shapes, shape);
  shapes.end_array();
  json::Writer overflow;
  overflow.begin_object().member("count", workload.overflow.count);
  overflow.member("total_micros", workload.overflow.micros);
  overflow.member("max_shapes", workload.max_shapes).end_object();
  advisor::ReportSection section;
  section.json_members = {{"workload", shapes.take()}, {"workload_overflow", overflow.take()}};
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
  section.html = std::move(table);
  return section;
}

}  // namespace docguard::proxy
