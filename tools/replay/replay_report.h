// The replay's report: report.json for tools and CI, report.html for people (a latency chart per
// shape, the table of shapes, an example of each differing shape).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "docguard/base/expected.h"
#include "docguard/tools/replay_compare.h"
#include "replay_runner.h"

namespace docguard::tools {

struct ReplayReport {
  const ReplayOptions& options;
  const ReplayOutcome& outcome;
  const std::vector<ShapeResult>& shapes;
};

std::string replay_report_json(const ReplayReport& report);
std::string replay_report_html(const ReplayReport& report);

// Writes both files into options.report_dir (created if missing).
base::Expected<void> write_replay_report(const ReplayReport& report);

}  // namespace docguard::tools
