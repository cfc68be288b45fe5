// docguard_cluster_probe URI [--seconds N]: prints each topology change as one JSON line
// ({"t_ms": ms since start, "topology": {...}}), for tests against replica-set doubles and for
// looking at a real cluster. Exit status 2 when the URI is refused or the monitor cannot start.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "docguard/base/json_writer.h"
#include "docguard/cluster/mongoc_log.h"
#include "docguard/cluster/topology_monitor.h"

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

void print_line(const std::string& line) {
  static std::mutex mu;
  std::lock_guard lock(mu);
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

// {"t_ms":N,"topology":{...}}: one line per topology the monitor reports.
std::string topology_line(int64_t t_ms, const docguard::cluster::Topology& topology) {
  docguard::json::Writer w;
  w.begin_object().member("t_ms", t_ms).key("topology").raw(to_json(topology)).end_object();
  return w.take();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace docguard::cluster;
  std::string uri_text;
  double seconds = 0;  // 0: until SIGINT/SIGTERM
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (uri_text.empty()) {
      uri_text = arg;
    } else {
      std::fprintf(stderr, "usage: %s URI [--seconds N]\n", argv[0]);
      return 2;
    }
  }
  if (uri_text.empty()) {
    std::fprintf(stderr, "usage: %s URI [--seconds N]\n", argv[0]);
    return 2;
  }
  // libmongoc's warnings to stderr; its per-heartbeat DEBUG lines only with DOCGUARD_PROBE_DEBUG.
  const bool debug = std::getenv("DOCGUARD_PROBE_DEBUG") != nullptr;
  set_mongoc_log_handler(
      [debug](MongocLogLevel level, std::string_view domain, std::string_view message) {
        if (level <= MongocLogLevel::kWarning || debug) {
          std::fprintf(stderr, "mongoc %.*s: %.*s\n", static_cast<int>(domain.size()),
                       domain.data(), static_cast<int>(message.size()), message.data());
        }
      });
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  auto parsed = parse_upstream_uri(uri_text);
  if (!parsed) {
    std::fprintf(stderr, "%s\n", parsed.error().message.c_str());
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto since_start = [t0] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 t0)
        .count();
  };
  auto monitor = TopologyMonitor::start(parsed.value());
  if (!monitor) {
    std::fprintf(stderr, "%s\n", monitor.error().message.c_str());
    return 2;
  }
  // Printing on the monitor thread is fine for a tool; the proxy posts to its executor instead.
  monitor.value()->subscribe([&](const std::shared_ptr<const Topology>& t) {
    print_line(topology_line(since_start(), *t));
  });
  // Events before subscribe() are not replayed: show where things stand (may repeat a line).
  print_line(topology_line(since_start(), *monitor.value()->snapshot()));
  // A line "check" on stdin calls request_check() (tests use it after a stepdown).
  static std::mutex alive_mu;  // the stdin thread is detached: never touch a destroyed monitor
  static TopologyMonitor* alive = monitor.value().get();
  std::thread([] {
    char line[64];
    while (std::fgets(line, sizeof line, stdin)) {
      std::lock_guard lock(alive_mu);
      if (alive && std::string(line).rfind("check", 0) == 0) alive->request_check();
    }
  }).detach();
  while (!g_stop && (seconds <= 0 || since_start() < seconds * 1000)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const MonitorCounters c = monitor.value()->counters();
  {
    std::lock_guard lock(alive_mu);
    alive = nullptr;
  }
  monitor.value().reset();
  docguard::json::Writer w;
  w.begin_object()
      .member("t_ms", since_start())
      .key("counters")
      .begin_object()
      .member("topology_events", c.topology_events)
      .member("primary_changes", c.primary_changes)
      .member("selection_failures", c.selection_failures)
      .end_object()
      .end_object();
  print_line(w.text());
  return 0;
}
