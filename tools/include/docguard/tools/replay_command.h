// `docguard replay`: runs a recording (docs/recording.md) against another cluster and compares
// its answers with the recorded ones, per query shape. Its options are read by the program's
// command line (app/), which fills ReplayOptions.
// Exit 0 when no shape differs, 1 when one does, 2 on read/write errors and on refusals (a
// target that is the recording's own source, a replay longer than --max-duration), 3 when the
// target failed and the replay stopped early.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace docguard::tools {

// Which recorded requests are replayed (all when empty); the options are ANDed, a list matches
// when any of its items does. A getMore or killCursors follows the request that opened its
// cursor.
struct ReplaySelection {
  std::string from;  // seconds since the recording's start, or an RFC 3339 time; "" for none
  std::string to;
  std::vector<std::string> apps;
  std::vector<std::string> namespaces;  // db.coll, db.* or db
  std::vector<std::string> commands;
  std::vector<std::string> shapes;  // the shape's text as the report names it
  bool empty() const {
    return from.empty() && to.empty() && apps.empty() && namespaces.empty() && commands.empty() &&
           shapes.empty();
  }
};

struct ReplayOptions {
  std::filesystem::path recording;
  std::string target;  // a mongodb:// URI, with its own credentials and TLS options
  // A copy of production to replay against as well: a shape that differs there too is noise
  // (results that cannot repeat), reported apart and not counted in the exit code.
  std::string baseline;
  std::string target_option = "--target";  // how messages name `target` ("--baseline" for it)
  double speed = 1;                        // recorded time / replay time; 0: no waiting at all
  bool read_only = false;
  bool allow_writes_out = false;   // replay aggregates with $out / $merge
  bool as_sent_by_client = false;  // replay what clients sent, docguard's refusals included
  bool show_values = false;        // the report's differences show values, not only types
  bool accept_torn_tail = false;   // a data file without a checksum may end cut short
  // Paths left out of compared documents: everywhere, and per shape text.
  std::vector<std::string> ignore;
  std::map<std::string, std::vector<std::string>> ignore_by_shape;
  std::filesystem::path report_dir = ".";
  // Recorded connections open at once, each on a thread and a connection of its own: a
  // recording that had more open at once is refused before anything is sent.
  size_t max_connections = 512;
  // Live sessions, one per recorded lsid for the whole replay: past this, commands of further
  // recorded sessions are not sent (counted).
  size_t max_sessions = 10000;
  // Stop early when the target fails: the share of errors (no answer, or a failure the
  // recording has not: replayed_reply_failed) over the last `abort_window` requests, and, when
  // above 0, the median replayed latency of that window in milliseconds.
  double abort_error_rate = 0.5;
  size_t abort_window = 100;
  double abort_latency_ms = 0;
  ReplaySelection selection;
  bool dry_run = false;  // print what would be sent; connect to nothing
  // A replay expected to take longer (the recording's span at --speed) is refused.
  double max_duration_seconds = 24 * 3600;
};

// "1", "4", "0.5" or "max" (0: no waiting); false for anything else.
bool parse_speed(std::string_view text, double& speed);
// An --ignore: "PATH" everywhere, or "SHAPE::PATH" for one shape (a shape's text holds no "::").
void add_ignored_path(ReplayOptions& options, std::string_view path);

// A duration: "90", "90s", "15m", "1.5h", "2d"; false for anything else.
bool parse_duration(std::string_view text, double& seconds);
// A --from / --to: seconds since the recording's start ("12.5") or an RFC 3339 time
// ("2026-12-07T20:15:00Z", "...+01:00", fractions allowed). `absolute` says which it was;
// `value` is seconds (since the start, or since the epoch).
bool parse_time_bound(std::string_view text, double& value, bool& absolute);

int run_replay(const ReplayOptions& options);

}  // namespace docguard::tools
