// report.json and report.html of a replay. The HTML is one self-contained page like the
// advisor's scan report: inline CSS, an inline SVG chart, text escaped by the advisor's helper.
#include "replay_report.h"

#include <algorithm>
#include <cstdio>
#include <system_error>

#include "docguard/advisor/text_format.h"
#include "docguard/base/json_writer.h"
#include "docguard/base/private_files.h"

namespace docguard::tools {

namespace {

using advisor::html_escape;

std::string fixed(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

std::string millis(uint64_t micros) { return fixed(static_cast<double>(micros) / 1000.0); }

void write_counts(json::Writer& w, const ReplayCounts& c) {
  w.key("counts").begin_object();
  w.member("connections", c.connections).member("requests", c.requests).member("sent", c.sent);
  w.member("handshakes_not_replayed", c.handshakes).member("skipped_writes", c.skipped_writes);
  w.member("skipped_legacy", c.skipped_legacy).member("failed", c.failed);
  w.member("trimmed_batches", c.trimmed_batches);
  w.member("exhaust_replies_not_compared", c.exhaust_not_compared);
  w.member("live_sessions", c.sessions).member("peak_connections", c.peak_connections);
  w.member("unverified_files", c.unverified_files).member("recorded_micros", c.recorded_micros);
  w.member("replay_micros", c.replay_micros).end_object();
  w.key("not_replayed").begin_object();
  for (const auto& [reason, n] : c.skipped) w.member(reason, n);
  w.end_object().key("commands_not_allowed").begin_object();
  for (const auto& [name, n] : c.skipped_commands) w.member(name, n);
  w.end_object().key("commands").begin_object();
  for (const auto& [name, tally] : c.commands) {
    w.key(name).begin_object().member("sent", tally.first).member("ok", tally.second).end_object();
  }
  w.end_object();
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
  json::Writer w;
  w.begin_object().member("recording", report.options.recording.string()).key("speed");
  if (report.options.speed > 0) {
    w.value(report.options.speed);
  } else {
    w.value("max");
  }
  w.member("read_only", report.options.read_only);
  if (report.outcome.dry_run) w.member("dry_run", true);
  if (const auto& aborted = report.outcome.aborted) {
    w.key("aborted").begin_object().member("reason", aborted->reason);
    w.member("after_requests", aborted->after_requests).end_object();
  }
  write_counts(w, report.outcome.counts);
  w.member("differing_shapes", differing_shapes(report.shapes)).key("shapes").begin_array();
  for (const ShapeResult& s : report.shapes) {
    w.begin_object().member("shape", s.shape).member("operations", s.operations);
    w.member("differing", s.differing).member("differs", s.differs()).member("noise", s.noise);
    w.member("not_comparable", s.not_comparable);
    w.member("recorded_documents", s.recorded_documents);
    w.member("replayed_documents", s.live_documents).key("latency_micros").begin_object();
    w.member("recorded_p50", s.recorded_p50).member("recorded_p99", s.recorded_p99);
    w.member("replayed_p50", s.live_p50).member("replayed_p99", s.live_p99).end_object();
    if (s.not_comparable > 0) w.member("not_comparable_why", s.not_comparable_why);
    if (s.noise) w.member("baseline_difference", s.baseline_difference);
    if (s.example != nullptr) {
      w.member("difference", s.first_difference).key("example").begin_object();
      w.member("request", s.example->request_json);
      w.member("recorded_reply", s.example->recorded_reply_json);
      w.member("replayed_reply", s.example->live_reply_json);
      if (!s.example->live_error.empty()) w.member("replay_error", s.example->live_error);
      w.end_object();
    }
    w.end_object();
  }
  w.end_array().end_object();
  return w.take() + "\n";
}

std::string replay_report_html(const ReplayReport& report) {
  const ReplayCounts& c = report.outcome.counts;
  const size_t differing = differing_shapes(report.shapes);
  std::string html =
      "<!doctype html><html><head><meta charset='utf-8'><title>docguard replay"
      "</title><style>" +
      std::string(advisor::html_page_style()) + kReplayClasses +
      "</style></head><body><h1>docguard replay</h1>";
  if (report.outcome.dry_run) {
    html += "<p><b>Dry run: nothing was sent.</b> The counts say what a replay would send.</p>";
  }
  if (const auto& aborted = report.outcome.aborted) {
    html += "<p class='differs'><b>Stopped early after " + std::to_string(aborted->after_requests) +
            " requests: " + html_escape(aborted->reason) +
            ".</b> What follows covers those requests only.</p>";
  }
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
    // Through a new file renamed over the old: a link planted under the name is replaced,
    // never written through.
    if (auto written = base::replace_file(report.options.report_dir / name, text); !written) {
      return written;
    }
  }
  return {};
}

}  // namespace docguard::tools
