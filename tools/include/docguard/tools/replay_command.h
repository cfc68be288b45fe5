// `docguard replay`: runs a recording (docs/recording.md) against another cluster and compares
// its answers with the recorded ones, per query shape. Its options are read by the program's
// command line (app/), which fills ReplayOptions.
// Exit 0 when no shape differs, 1 when one does, 2 on read/write errors.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace docguard::tools {

struct ReplayOptions {
  std::filesystem::path recording;
  std::string target;  // a mongodb:// URI, with its own credentials and TLS options
  // A copy of production to replay against as well: a shape that differs there too is noise
  // (results that cannot repeat), reported apart and not counted in the exit code.
  std::string baseline;
  double speed = 1;  // recorded time / replay time; 0: no waiting at all
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
};

// "1", "4", "0.5" or "max" (0: no waiting); false for anything else.
bool parse_speed(std::string_view text, double& speed);
// An --ignore: "PATH" everywhere, or "SHAPE::PATH" for one shape (a shape's text holds no "::").
void add_ignored_path(ReplayOptions& options, std::string_view path);

int run_replay(const ReplayOptions& options);

}  // namespace docguard::tools
