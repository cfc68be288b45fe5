// `docguard replay`: the arguments, the progress shown while it runs, the report and the exit
// code (replay_command.h).
#include "docguard/tools/replay_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "docguard/cluster/mongoc_log.h"
#include "replay_report.h"
#include "replay_runner.h"

namespace docguard::tools {

namespace {

// A bar on stderr while the replay runs, redrawn a few times a second; only on a terminal,
// where a redrawn line reads as progress rather than as noise in a log.
class ProgressBar {
 public:
  explicit ProgressBar(const ReplayProgress& progress) : progress_(progress) {
    if (isatty(STDERR_FILENO) == 1) thread_ = std::thread([this] { draw_until_stopped(); });
  }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  ~ProgressBar() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lock(mu_);
      stopped_ = true;
    }
    cv_.notify_one();
    thread_.join();
    draw();
    std::fputc('\n', stderr);
  }

 private:
  void draw_until_stopped() {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stopped_; })) {
      draw();
    }
  }
  void draw() const {
    constexpr int kWidth = 40;
    const uint64_t total = progress_.total.load();
    const uint64_t done = progress_.done.load();
    const int filled = total == 0 ? 0 : static_cast<int>(kWidth * done / total);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(kWidth, ' ');
    std::fprintf(stderr, "\r[%s] %3d%% %llu/%llu requests", bar.c_str(),
                 total == 0 ? 0 : static_cast<int>(100 * done / total),
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total));
    std::fflush(stderr);
  }

  const ReplayProgress& progress_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
  std::thread thread_;
};

// A shape that differs against the target and against the baseline alike is noise.
void mark_noise(std::vector<ShapeResult>& shapes, const std::vector<ShapeResult>& baseline) {
  for (ShapeResult& s : shapes) {
    if (s.differing == 0) continue;
    const auto twin = std::find_if(baseline.begin(), baseline.end(),
                                   [&](const ShapeResult& b) { return b.shape == s.shape; });
    if (twin != baseline.end() && twin->differing > 0) {
      s.noise = true;
      s.baseline_difference = twin->first_difference;
    }
  }
}

// "38 not replayed (35 redacted, 2 handshakes, 1 not_allowed)": the total and its main reasons,
// largest first; the report has them all.
std::string not_replayed_summary(const ReplayCounts& c) {
  // Legacy requests are in `skipped` too.
  std::vector<std::pair<uint64_t, std::string>> reasons;
  if (c.handshakes > 0) reasons.emplace_back(c.handshakes, "handshakes");
  if (c.skipped_writes > 0) reasons.emplace_back(c.skipped_writes, "writes under --read-only");
  for (const auto& [reason, n] : c.skipped) {
    if (n > 0) reasons.emplace_back(n, reason);
  }
  uint64_t total = 0;
  for (const auto& [n, reason] : reasons) total += n;
  std::stable_sort(reasons.begin(), reasons.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  constexpr size_t kShown = 4;
  std::string out = fmt::format("{} not replayed", total);
  if (reasons.empty()) return out;
  out += " (";
  for (size_t i = 0; i < reasons.size() && i < kShown; ++i) {
    out += fmt::format("{}{} {}", i == 0 ? "" : ", ", reasons[i].first, reasons[i].second);
  }
  out += reasons.size() > kShown ? ", ...; see the report)" : ")";
  return out;
}

}  // namespace

bool parse_speed(std::string_view text, double& speed) {
  if (text == "max") {
    speed = 0;
    return true;
  }
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), speed);
  return ec == std::errc{} && end == text.data() + text.size() && speed > 0;
}

void add_ignored_path(ReplayOptions& options, std::string_view path) {
  const size_t split = path.rfind("::");
  if (split == std::string_view::npos) {
    options.ignore.emplace_back(path);
  } else {
    options.ignore_by_shape[std::string(path.substr(0, split))].emplace_back(
        path.substr(split + 2));
  }
}

int run_replay(const ReplayOptions& options) {
  // libmongoc's own warnings would interleave with the progress bar; its errors reach the
  // report through the commands that failed.
  cluster::set_mongoc_log_handler({});
  ReplayProgress progress;
  base::Expected<ReplayOutcome> outcome = base::Error{};
  {
    const ProgressBar bar(progress);
    outcome = replay_recording(options, progress);
  }
  if (!outcome) {
    std::fprintf(stderr, "docguard replay: %s\n", outcome.error().message.c_str());
    return 2;
  }
  if (!options.baseline.empty() && !outcome->aborted && !outcome->dry_run) {
    // The same replay against a copy of production: what differs there too is noise. The
    // baseline is a copy, another cluster: the recording's own source is refused there too.
    ReplayOptions against_baseline = options;
    against_baseline.target = options.baseline;
    against_baseline.target_option = "--baseline";
    ReplayProgress baseline_progress;
    base::Expected<ReplayOutcome> baseline = base::Error{};
    {
      const ProgressBar bar(baseline_progress);
      baseline = replay_recording(against_baseline, baseline_progress);
    }
    if (!baseline) {
      std::fprintf(stderr, "docguard replay: %s\n", baseline.error().message.c_str());
      return 2;
    }
    if (baseline->aborted) {
      outcome->aborted = ReplayAbort{"--baseline: " + baseline->aborted->reason,
                                     baseline->aborted->after_requests};
    } else {
      mark_noise(outcome->shapes, baseline->shapes);
    }
  }
  const std::vector<ShapeResult>& shapes = outcome->shapes;
  const ReplayReport report{options, *outcome, shapes};
  if (auto written = write_replay_report(report); !written) {
    std::fprintf(stderr, "docguard replay: %s\n", written.error().message.c_str());
    return 2;
  }
  size_t differing = 0;
  size_t not_comparable = 0;
  size_t noise = 0;
  for (const ShapeResult& s : shapes) {
    differing += s.differs() ? 1 : 0;
    noise += s.noise ? 1 : 0;
    not_comparable += s.not_comparable > 0 ? 1 : 0;
  }
  const ReplayCounts& c = outcome->counts;
  std::fprintf(
      stderr,
      "docguard replay: %llu requests on %llu connections, %llu replayed in %llu live sessions, "
      "%s, %llu failed, in %.1f s (recorded %.1f s); %zu of %zu shapes differ, %zu not "
      "comparable, %zu noise; report in %s\n",
      static_cast<unsigned long long>(c.requests), static_cast<unsigned long long>(c.connections),
      static_cast<unsigned long long>(c.sent), static_cast<unsigned long long>(c.sessions),
      not_replayed_summary(c).c_str(), static_cast<unsigned long long>(c.failed),
      static_cast<double>(c.replay_micros) / 1e6, static_cast<double>(c.recorded_micros) / 1e6,
      differing, shapes.size(), not_comparable, noise, options.report_dir.string().c_str());
  if (const auto found = c.skipped.find("not_selected");
      !options.selection.empty() && c.requests > 0 && found != c.skipped.end() &&
      found->second >= c.requests) {
    std::fprintf(stderr,
                 "docguard replay: warning: the selection matched no request; nothing was "
                 "replayed\n");
  }
  if (outcome->dry_run) {
    std::fprintf(stderr, "docguard replay: dry run: nothing was sent, no cluster was contacted\n");
    return 0;
  }
  if (outcome->aborted) {
    std::fprintf(stderr,
                 "docguard replay: stopped early after %llu requests: %s (the report is partial)\n",
                 static_cast<unsigned long long>(outcome->aborted->after_requests),
                 outcome->aborted->reason.c_str());
    return 3;
  }
  return differing > 0 ? 1 : 0;
}

}  // namespace docguard::tools
