// report.json and report.html of a replay. The HTML is one self-contained page like the
// advisor's scan report: inline CSS, an inline SVG chart, text escaped by the advisor's helper.
#include "replay_report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <system_error>

#include "docguard/advisor/text_format.h"
#include "docguard/base/json_string.h"

namespace docguard::tools {

namespace {

using advisor::html_escape;

std::string fixed(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

std::string millis(uint64_t micros) { return fixed(static_cast<double>(micros) / 1000.0); }

void member(std::string& out, std::string_view key, uint64_t value) {
  out += '"';
  out += key;
  out += "\":" + std::to_string(value) + ",";
}

void counts_json(std::string& out, const ReplayCounts& c) {
  out += "\"counts\":{";
  member(out, "connections", c.connections);
  member(out, "requests", c.requests);
  member(out, "sent", c.sent);
  member(out, "handshakes_not_replayed", c.handshakes);
  member(out, "skipped_writes", c.skipped_writes);
  member(out, "skipped_legacy", c.skipped_legacy);
  member(out, "failed", c.failed);
  member(out, "trimmed_batches", c.trimmed_batches);
  member(out, "exhaust_replies_not_compared", c.exhaust_not_compared);
  member(out, "live_sessions", c.sessions);
  member(out, "peak_connections", c.peak_connections);
  member(out, "unverified_files", c.unverified_files);
  member(out, "recorded_micros", c.recorded_micros);
  out += "\"replay_micros\":" + std::to_string(c.replay_micros) + "},\"not_replayed\":{";
  bool first_reason = true;
  for (const auto& [reason, n] : c.skipped) {
    if (!first_reason) out += ",";
    first_reason = false;
    json::append_string(out, reason);
    out += ":" + std::to_string(n);
  }
  out += "},\"commands_not_allowed\":{";
  first_reason = true;
  for (const auto& [name, n] : c.skipped_commands) {
    if (!first_reason) out += ",";
    first_reason = false;
    json::append_string(out, name);
    out += ":" + std::to_string(n);
  }
  out += "},\"commands\":{";
  bool first = true;
  for (const auto& [name, tally] : c.commands) {
    if (!first) out += ",";
    first = false;
    json::append_string(out, name);
    out += ":{\"sent\":" + std::to_string(tally.first) + ",\"ok\":" + std::to_string(tally.second) +
           "}";
  }
  out += "}";
}

// What was not sent, by reason and by command name, in words for the page.
std::string not_replayed_text(const ReplayCounts& c) {
  if (c.skipped.empty()) return "";
  std::string out = " Not replayed:";
  bool first = true;
  for (const auto& [reason, n] : c.skipped) {
    out += (first ? " " : ", ") + std::to_string(n) + " " + reason;
    first = false;
  }
  if (!c.skipped_commands.empty()) {
    out += " (";
    first = true;
    for (const auto& [name, n] : c.skipped_commands) {
      out += (first ? "" : ", ") + name + " " + std::to_string(n);
      first = false;
    }
    out += ")";
  }
  return out + ".";
}

size_t differing_shapes(const std::vector<ShapeResult>& shapes) {
  return static_cast<size_t>(std::count_if(shapes.begin(), shapes.end(),
                                           [](const ShapeResult& s) { return s.differs(); }));
}

// One bar pair per shape: recorded p50 / p99 and replayed p50 / p99, on a shared linear scale.
std::string latency_svg(const std::vector<ShapeResult>& shapes) {
  constexpr double kLabel = 360, kPlot = 480, kRow = 34, kTop = 24;
  uint64_t top = 1;
  for (const ShapeResult& s : shapes) top = std::max({top, s.recorded_p99, s.live_p99});
  const double height = kTop + kRow * static_cast<double>(shapes.size()) + 10;
  const auto width_of = [&](uint64_t v) {
    return std::max(1.0, kPlot * static_cast<double>(v) / static_cast<double>(top));
  };
  std::string svg = "<svg xmlns='http://www.w3.org/2000/svg' width='" + fixed(kLabel + kPlot + 90) +
                    "' height='" + fixed(height) +
                    "' role='img'><title>Latency per shape</title><text x='0' y='12'>latency "
                    "per shape, ms (light: p99, dark: p50; grey recorded, blue replayed; scale "
                    "to " +
                    millis(top) + " ms)</text>";
  double y = kTop;
  for (const ShapeResult& s : shapes) {
    std::string label = s.shape.size() > 60 ? s.shape.substr(0, 57) + "..." : s.shape;
    svg += "<text x='0' y='" + fixed(y + 14) + "'>" + html_escape(label) + "</text>";
    const auto bar = [&](double row_y, uint64_t p50, uint64_t p99, const char* light,
                         const char* dark, const char* what) {
      svg += "<rect x='" + fixed(kLabel) + "' y='" + fixed(row_y) + "' width='" +
             fixed(width_of(p99)) + "' height='12' fill='" + light + "'><title>" + what + " p99 " +
             millis(p99) + " ms</title></rect>";
      svg += "<rect x='" + fixed(kLabel) + "' y='" + fixed(row_y) + "' width='" +
             fixed(width_of(p50)) + "' height='12' fill='" + dark + "'><title>" + what + " p50 " +
             millis(p50) + " ms</title></rect>";
      svg += "<text x='" + fixed(kLabel + width_of(p99) + 4) + "' y='" + fixed(row_y + 10) + "'>" +
             millis(p50) + " / " + millis(p99) + "</text>";
    };
    bar(y, s.recorded_p50, s.recorded_p99, "#cfcfcf", "#8a8a8a", "recorded");
    bar(y + 14, s.live_p50, s.live_p99, "#a9c4f0", "#4a7bd0", "replayed");
    y += kRow;
  }
  return svg + "</svg>";
}

// The replay page's own classes, after the page rules every docguard report shares.
constexpr const char* kReplayClasses =
    R"(.differs{color:#fff;background:#b00020}.same{background:#e8f5e9}
pre{white-space:pre-wrap;word-break:break-all;background:#f8f8f8;padding:6px;margin:0}
svg text{font-size:11px;fill:#444}
)";

}  // namespace

std::string replay_report_json(const ReplayReport& report) {
  std::string out = "{\"recording\":";
  json::append_string(out, report.options.recording.string());
  out += ",\"speed\":" + (report.options.speed > 0 ? fixed(report.options.speed) : "\"max\"");
  out += ",\"read_only\":" + std::string(report.options.read_only ? "true" : "false") + ",";
  counts_json(out, report.outcome.counts);
  out += ",\"differing_shapes\":" + std::to_string(differing_shapes(report.shapes));
  out += ",\"shapes\":[";
  bool first = true;
  for (const ShapeResult& s : report.shapes) {
    if (!first) out += ",";
    first = false;
    out += "{\"shape\":";
    json::append_string(out, s.shape);
    out += ",\"operations\":" + std::to_string(s.operations) +
           ",\"differing\":" + std::to_string(s.differing) +
           ",\"differs\":" + (s.differs() ? "true" : "false") +
           ",\"noise\":" + (s.noise ? "true" : "false") +
           ",\"not_comparable\":" + std::to_string(s.not_comparable) +
           ",\"recorded_documents\":" + std::to_string(s.recorded_documents) +
           ",\"replayed_documents\":" + std::to_string(s.live_documents) + ",\"latency_micros\":{" +
           "\"recorded_p50\":" + std::to_string(s.recorded_p50) +
           ",\"recorded_p99\":" + std::to_string(s.recorded_p99) +
           ",\"replayed_p50\":" + std::to_string(s.live_p50) +
           ",\"replayed_p99\":" + std::to_string(s.live_p99) + "}";
    if (s.not_comparable > 0) {
      out += ",\"not_comparable_why\":";
      json::append_string(out, s.not_comparable_why);
    }
    if (s.noise) {
      out += ",\"baseline_difference\":";
      json::append_string(out, s.baseline_difference);
    }
    if (s.example != nullptr) {
      out += ",\"difference\":";
      json::append_string(out, s.first_difference);
      out += ",\"example\":{\"request\":";
      json::append_string(out, s.example->request_json);
      out += ",\"recorded_reply\":";
      json::append_string(out, s.example->recorded_reply_json);
      out += ",\"replayed_reply\":";
      json::append_string(out, s.example->live_reply_json);
      if (!s.example->live_error.empty()) {
        out += ",\"replay_error\":";
        json::append_string(out, s.example->live_error);
      }
      out += "}";
    }
    out += "}";
  }
  return out + "]}\n";
}

std::string replay_report_html(const ReplayReport& report) {
  const ReplayCounts& c = report.outcome.counts;
  const size_t differing = differing_shapes(report.shapes);
  std::string html =
      "<!doctype html><html><head><meta charset='utf-8'><title>docguard replay"
      "</title><style>" +
      std::string(advisor::html_page_style()) + kReplayClasses +
      "</style></head><body><h1>docguard replay</h1>";
  html += "<p>Recording <code>" + html_escape(report.options.recording.string()) + "</code>, " +
          std::to_string(c.connections) + " connections, " + std::to_string(c.requests) +
          " requests: " + std::to_string(c.sent) + " replayed, " + std::to_string(c.handshakes) +
          " handshakes not replayed, " + std::to_string(c.skipped_writes) + " writes skipped, " +
          std::to_string(c.skipped_legacy) + " legacy requests skipped, " +
          std::to_string(c.failed) + " without a reply; " + std::to_string(c.sessions) +
          " live sessions, one per recorded session." + html_escape(not_replayed_text(c)) +
          " Recorded over " + millis(c.recorded_micros) + " ms, replayed in " +
          millis(c.replay_micros) + " ms (speed " +
          (report.options.speed > 0 ? fixed(report.options.speed) : std::string("max")) +
          ").</p><p><b>" + std::to_string(differing) + " of " +
          std::to_string(report.shapes.size()) + " shapes differ.</b></p>";
  html += "<h2>Latency per shape</h2>" + latency_svg(report.shapes);
  html +=
      "<h2>Shapes</h2><table><tr><th>shape</th><th>operations</th><th>differing</th>"
      "<th>recorded p50 / p99 ms</th><th>replayed p50 / p99 ms</th><th>difference</th></tr>";
  const auto difference_cell = [](const ShapeResult& s) {
    if (s.noise)
      return "noise (the baseline differs too: " + s.baseline_difference +
             "): " + s.first_difference;
    if (s.differing == 0 && s.not_comparable > 0) {
      return "not comparable (" + std::to_string(s.not_comparable) + "): " + s.not_comparable_why;
    }
    return s.first_difference;
  };
  for (const ShapeResult& s : report.shapes) {
    html += "<tr class='" + std::string(s.differs() ? "differs" : "same") + "'><td><code>" +
            html_escape(s.shape) + "</code></td><td>" + std::to_string(s.operations) + "</td><td>" +
            std::to_string(s.differing) + "</td><td>" + millis(s.recorded_p50) + " / " +
            millis(s.recorded_p99) + "</td><td>" + millis(s.live_p50) + " / " + millis(s.live_p99) +
            "</td><td>" + html_escape(difference_cell(s)) + "</td></tr>";
  }
  html += "</table>";
  if (differing > 0) html += "<h2>Differences</h2>";
  for (const ShapeResult& s : report.shapes) {
    if (s.example == nullptr) continue;
    html += "<h3><code>" + html_escape(s.shape) + "</code>: " + html_escape(s.first_difference) +
            "</h3><table><tr><th>request (as replayed)</th><td><pre>" +
            html_escape(s.example->request_json) +
            "</pre></td></tr><tr><th>recorded reply</th>"
            "<td><pre>" +
            html_escape(s.example->recorded_reply_json) +
            "</pre></td></tr><tr><th>replayed reply</th><td><pre>" +
            html_escape(s.example->live_reply_json.empty() ? s.example->live_error
                                                           : s.example->live_reply_json) +
            "</pre></td></tr></table>";
  }
  return html + "</body></html>\n";
}

base::Expected<void> write_replay_report(const ReplayReport& report) {
  std::error_code ec;
  std::filesystem::create_directories(report.options.report_dir, ec);
  for (const auto& [name, text] : {std::pair{"report.json", replay_report_json(report)},
                                   std::pair{"report.html", replay_report_html(report)}}) {
    const std::filesystem::path path = report.options.report_dir / name;
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << text;
    file.close();
    if (!file) {
      return base::Error{base::ErrorKind::kIo, base::ErrorSource::kDocguard,
                         "cannot write " + path.string(), path.string()};
    }
  }
  return {};
}

}  // namespace docguard::tools
