// One self-contained page: inline CSS, inline SVG charts (log-scale histograms with the bounds
// drawn on them), the findings table and, when traffic gave any, the $lookup graph.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "docguard/advisor/report.h"
#include "docguard/advisor/text_format.h"

namespace docguard::advisor {
namespace {

// The page rules every docguard HTML report shares: body, headings, tables.
constexpr std::string_view kPageStyle = R"(
body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222;max-width:1200px}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;width:100%;margin:.5em 0}
td,th{border:1px solid #ddd;padding:4px 6px;vertical-align:top;text-align:left}
th{background:#f4f4f4})";

// The scan report's own classes (severities, charts), which whatif's page uses too.
constexpr std::string_view kReportClasses =
    R"(.block{color:#fff;background:#b00020}.warn{background:#ffd54f}
.info{background:#e3f2fd}.sev{font-weight:bold;text-align:center;width:4em}
.charts{display:flex;flex-wrap:wrap;gap:1em}.muted{color:#777}
svg text{font-size:10px;fill:#444}
)";

}  // namespace

std::string_view html_page_style() { return kPageStyle; }

std::string_view html_report_style() {
  static const std::string style = std::string(kPageStyle) + std::string(kReportClasses);
  return style;
}

namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

// A histogram on a log10 x axis from 1 to past the largest of the values and bounds, bar
// heights on a log scale (one outlier must stay visible beside thousands of ordinary values).
std::string histogram_svg(const std::string& title, const LogHistogram& h,
                          const std::vector<std::pair<uint64_t, std::string>>& bounds, bool bytes) {
  constexpr double kWidth = 520, kHeight = 160, kLeft = 30, kBottom = 24, kTop = 18;
  uint64_t top = std::max<uint64_t>(h.max(), 10);
  for (const auto& bound : bounds) top = std::max(top, bound.first);
  const double decades = std::log10(static_cast<double>(top) * 1.5);
  const auto x_of = [&](double v) {
    return kLeft + (kWidth - kLeft - 10) * std::log10(std::max(v, 1.0)) / decades;
  };
  uint64_t tallest = 1;
  for (int b = 0; b < LogHistogram::kBuckets; ++b) tallest = std::max(tallest, h.bucket_count(b));
  const double plot_height = kHeight - kBottom - kTop;
  std::string svg = "<svg xmlns='http://www.w3.org/2000/svg' width='" + number(kWidth) +
                    "' height='" + number(kHeight) + "' role='img'><title>" + html_escape(title) +
                    "</title><text x='" + number(kLeft) + "' y='12'>" + html_escape(title) +
                    "</text>";
  for (int b = 0; b < LogHistogram::kBuckets; ++b) {
    const uint64_t count = h.bucket_count(b);
    if (!count) continue;
    const double x0 = x_of(static_cast<double>(LogHistogram::bucket_low(b)));
    const double x1 = std::max(x0 + 2, x_of(static_cast<double>(LogHistogram::bucket_high(b) + 1)));
    const double height = plot_height * std::log1p(static_cast<double>(count)) /
                          std::log1p(static_cast<double>(tallest));
    svg += "<rect x='" + number(x0) + "' y='" + number(kTop + plot_height - height) + "' width='" +
           number(x1 - x0) + "' height='" + number(height) + "' fill='#4a7bd0'><title>" +
           with_commas(LogHistogram::bucket_low(b)) + "-" +
           with_commas(LogHistogram::bucket_high(b)) + ": " + with_commas(count) +
           "</title></rect>";
  }
  const double axis_y = kTop + plot_height;
  svg += "<line x1='" + number(kLeft) + "' y1='" + number(axis_y) + "' x2='" + number(kWidth - 10) +
         "' y2='" + number(axis_y) + "' stroke='#888'/>";
  for (double tick = 1; tick <= static_cast<double>(top) * 1.5; tick *= 10) {
    const uint64_t value = static_cast<uint64_t>(tick);
    svg += "<text x='" + number(x_of(tick)) + "' y='" + number(axis_y + 14) +
           "' text-anchor='middle'>" + (bytes ? human_bytes(value) : with_commas(value)) +
           "</text>";
  }
  for (const auto& [value, label] : bounds) {
    const double x = x_of(static_cast<double>(value));
    svg += "<line x1='" + number(x) + "' y1='" + number(kTop) + "' x2='" + number(x) + "' y2='" +
           number(axis_y) + "' stroke='#b00020' stroke-dasharray='4 3'/>";
    // Labels near the right edge sit left of their line, so they are not cut off.
    const bool right = x > kWidth - 90;
    svg += "<text x='" + number(right ? x - 3 : x + 3) + "' y='" + number(kTop + 10) +
           "' text-anchor='" + (right ? "end" : "start") + "' style='fill:#b00020'>" +
           html_escape(label) + "</text>";
  }
  return svg + "</svg>";
}

// Collections as labelled boxes (two in a row, more on a circle), one arrow per $lookup from
// the collection read to the collection joined, labelled with how often it ran.
std::string lookup_graph_svg(const std::vector<LookupEdge>& edges) {
  std::vector<std::string> nodes;
  const auto index_of = [&](const std::string& ns) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i] == ns) return i;
    }
    nodes.push_back(ns);
    return nodes.size() - 1;
  };
  std::vector<std::pair<size_t, size_t>> links;
  links.reserve(edges.size());
  for (const LookupEdge& e : edges) links.emplace_back(index_of(e.from_ns), index_of(e.to_ns));
  const bool row = nodes.size() <= 2;
  const double width = 720, height = row ? 110 : 380, cx = width / 2, cy = height / 2, r = 140;
  const auto pos = [&](size_t i) {
    if (row) return std::pair<double, double>{width * (0.22 + 0.56 * static_cast<double>(i)), cy};
    const double angle = 2 * M_PI * static_cast<double>(i) / static_cast<double>(nodes.size());
    return std::pair<double, double>{cx + 1.6 * r * std::cos(angle), cy + r * std::sin(angle)};
  };
  const auto half_width = [&](size_t i) {
    return 7.0 * static_cast<double>(nodes[i].size()) / 2 + 10;
  };
  constexpr double kHalfHeight = 14;
  // Where the segment from a node's centre towards (dx, dy) leaves its box.
  const auto exit_scale = [&](size_t i, double dx, double dy) {
    const double tx = dx != 0 ? half_width(i) / std::abs(dx) : 1e9;
    const double ty = dy != 0 ? kHalfHeight / std::abs(dy) : 1e9;
    return std::min(tx, ty);
  };
  std::string svg = "<svg xmlns='http://www.w3.org/2000/svg' width='" + number(width) +
                    "' height='" + number(height) +
                    "' style='font:13px sans-serif'>"
                    "<defs><marker id='arrow' viewBox='0 0 10 10' refX='10' refY='5' "
                    "markerWidth='8' markerHeight='8' orient='auto'><path d='M0,0L10,5L0,10z' "
                    "fill='#555'/></marker></defs>";
  for (size_t i = 0; i < links.size(); ++i) {
    const auto [x1, y1] = pos(links[i].first);
    const auto [x2, y2] = pos(links[i].second);
    const double dx = x2 - x1, dy = y2 - y1;
    const double s1 = exit_scale(links[i].first, dx, dy), s2 = exit_scale(links[i].second, dx, dy);
    const double ax = x1 + dx * s1, ay = y1 + dy * s1, bx = x2 - dx * s2, by = y2 - dy * s2;
    svg += "<line x1='" + number(ax) + "' y1='" + number(ay) + "' x2='" + number(bx) + "' y2='" +
           number(by) + "' stroke='#555' stroke-width='1.5' marker-end='url(#arrow)'/><text x='" +
           number((ax + bx) / 2) + "' y='" + number((ay + by) / 2 - 6) +
           "' text-anchor='middle' style='fill:#555'>$lookup \u00d7 " +
           with_commas(edges[i].count) + "</text>";
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto [x, y] = pos(i);
    svg += "<rect x='" + number(x - half_width(i)) + "' y='" + number(y - kHalfHeight) +
           "' width='" + number(2 * half_width(i)) + "' height='" + number(2 * kHalfHeight) +
           "' rx='6' fill='#eaf1fb' stroke='#4a7bd0'/><text x='" + number(x) + "' y='" +
           number(y + 4.5) + "' text-anchor='middle'>" + html_escape(nodes[i]) + "</text>";
  }
  return svg + "</svg>";
}

// The apps behind a traffic finding, under its evidence.
std::string apps_line(const std::vector<std::string>& apps) {
  if (apps.empty()) return "";
  std::string out = "<br><small>apps: ";
  for (size_t i = 0; i < apps.size(); ++i) out += (i ? ", " : "") + html_escape(apps[i]);
  return out + "</small>";
}

std::string findings_table(const std::vector<Finding>& findings) {
  std::string out =
      "<table><tr><th>severity</th><th>namespace</th><th>kind</th><th>field</th>"
      "<th>evidence</th><th>source</th><th>pattern</th><th>suggestion</th></tr>";
  for (const Finding& f : findings) {
    const char* severity = severity_name(f.severity);
    out += std::string("<tr><td class='sev ") + severity + "'>" + severity + "</td><td>" +
           html_escape(f.db + (f.collection.empty() ? "" : "." + f.collection)) + "</td><td>" +
           kind_name(f.kind) + "</td><td><code>" + html_escape(f.field) + "</code></td><td>" +
           html_escape(f.evidence) + apps_line(f.apps) + "</td><td>" + f.source + "</td><td>" +
           html_escape(f.pattern) + "</td><td>" + html_escape(f.suggestion) + "</td></tr>";
  }
  return out + "</table>";
}

}  // namespace

std::string render_html(const ReportInput& input) {
  const AdvisorSettings& s = input.settings;
  std::string out = "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>" +
                    html_escape(input.title) + "</title><style>" +
                    std::string(html_report_style()) + "</style></head><body><h1>" +
                    html_escape(input.title) + "</h1><p class='muted'>" +
                    html_escape(input.source) + "</p>";
  out += "<h2>Findings (" + std::to_string(input.findings.size()) + ")</h2>" +
         findings_table(input.findings);
  out += approaching_limits_html(input.approaching_limits);
  if (!input.unknown_facts.empty()) {
    out +=
        "<h2>Unknown facts</h2><p class='muted'>The findings that need these are left out.</p>"
        "<ul>";
    for (const std::string& line : input.unknown_facts) out += "<li>" + html_escape(line) + "</li>";
    out += "</ul>";
  }
  if (!input.lookups.empty()) out += "<h2>$lookup graph</h2>" + lookup_graph_svg(input.lookups);
  for (const CollectionProfile* p : input.profiles) {
    out += "<h2 id='" + html_escape(p->ns()) + "'>" + html_escape(p->ns()) + "</h2><p>" +
           with_commas(p->documents()) + " documents, max depth " + std::to_string(p->max_depth()) +
           ", " + metadata_summary(p->metadata()) + "</p><div class='charts'>";
    if (p->documents()) {
      out += histogram_svg("document size (bytes)", p->sizes(),
                           {{s.document_bytes_warn, "Atlas"}, {s.document_bytes_limit, "16 MiB"}},
                           true);
    }
    for (const FieldStats& field : p->fields()) {
      if (field.array < 0) continue;
      out +=
          histogram_svg("length of " + field.path, p->arrays()[field.array].lengths,
                        {{s.array_length_warn, "Compass"}, {s.array_length_block, "Atlas"}}, false);
    }
    out += "</div>";
  }
  for (const ReportSection& section : input.sections) out += section.html;
  return out + "</body></html>\n";
}

}  // namespace docguard::advisor
