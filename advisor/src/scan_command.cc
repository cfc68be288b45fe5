#include "docguard/advisor/scan_command.h"

#include <iostream>
#include <memory>
#include <string>

#include "docguard/advisor/detectors.h"
#include "docguard/advisor/dump_profiler.h"
#include "docguard/advisor/report.h"
#include "docguard/advisor/rule_findings.h"
#include "docguard/advisor/validator.h"

namespace docguard::advisor {
namespace {

constexpr const char* kScanUsage =
    "usage: scan PATH [--config FILE] [--format text|json|html] [--fail-on warn|block]\n"
    "  PATH: mongodump output (a directory, gzipped or not, an --archive file, gzipped or not,\n"
    "  or one .bson file). Exit 1 when a finding reaches --fail-on, 2 on errors.\n";
constexpr const char* kValidatorUsage = "usage: validator PATH NAMESPACE\n";

}  // namespace

int run_scan(int argc, char** argv, std::ostream& out, std::ostream& err,
             const ScanConfigLoader& loader) {
  std::string path, format = "text", config_path;
  bool fail_on_set = false;
  Severity fail_on = Severity::kBlock;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--format" && has_value) {
      format = argv[++i];
    } else if (arg == "--fail-on" && has_value) {
      if (!parse_severity(argv[++i], &fail_on) || fail_on == Severity::kInfo) {
        err << "--fail-on takes warn or block\n" << kScanUsage;
        return 2;
      }
      fail_on_set = true;
    } else if (arg == "--config" && has_value) {
      config_path = argv[++i];
    } else if (arg == "-h" || arg == "--help") {
      out << kScanUsage;
      return 0;
    } else if (path.empty() && !arg.empty() && arg[0] != '-') {
      path = arg;
    } else {
      err << "unexpected argument: " << arg << "\n" << kScanUsage;
      return 2;
    }
  }
  if (path.empty() || (format != "text" && format != "json" && format != "html")) {
    err << kScanUsage;
    return 2;
  }
  ScanConfig config;
  if (!config_path.empty()) {
    if (!loader) {
      err << "scan: --config is not supported here\n";
      return 2;
    }
    try {
      config = loader(config_path);
    } catch (const std::exception& e) {
      err << "scan: " << e.what() << "\n";
      return 2;
    }
  }
  const AdvisorSettings& settings = config.settings;
  DumpProfiler profiler(settings);
  std::unique_ptr<RuleCheckingVisitor> rule_checker;
  if (config.rules) rule_checker = std::make_unique<RuleCheckingVisitor>(profiler, config.rules);
  DumpVisitor& visitor = rule_checker ? static_cast<DumpVisitor&>(*rule_checker) : profiler;
  if (auto error = read_dump(path, visitor)) {
    err << "scan: " << error->to_string() << "\n";
    return 2;
  }
  ReportInput report;
  report.source = path;
  report.profiles = profiler.profiles();
  report.findings = run_offline_detectors(report.profiles, settings);
  if (rule_checker) {
    rule_checker->append_findings(report.findings);
    sort_findings(report.findings);
  }
  report.settings = settings;
  if (format == "json") {
    out << render_json(report);
  } else if (format == "html") {
    out << render_html(report);
  } else {
    out << render_text(report);
  }
  if (fail_on_set) {
    for (const Finding& f : report.findings) {
      if (f.severity >= fail_on) return 1;
    }
  }
  return 0;
}

int run_validator(int argc, char** argv, std::ostream& out, std::ostream& err) {
  if (argc != 3) {
    err << kValidatorUsage;
    return 2;
  }
  const std::string path = argv[1], ns = argv[2];
  AdvisorSettings settings;
  DumpProfiler profiler(settings);
  if (auto error = read_dump(path, profiler)) {
    err << "validator: " << error->to_string() << "\n";
    return 2;
  }
  const CollectionProfile* match = nullptr;
  int matches = 0;
  for (const CollectionProfile* p : profiler.profiles()) {
    if (p->ns() == ns || (ns.find('.') == std::string::npos && p->collection() == ns)) {
      match = p;
      ++matches;
    }
  }
  if (matches != 1) {
    err << "validator: " << (matches ? "ambiguous" : "no such") << " namespace in the dump: " << ns
        << "\n";
    return 2;
  }
  out << build_collmod_command(*match, settings);
  return 0;
}

int run_scan(int argc, char** argv, const ScanConfigLoader& loader) {
  return run_scan(argc, argv, std::cout, std::cerr, loader);
}
int run_validator(int argc, char** argv) { return run_validator(argc, argv, std::cout, std::cerr); }

}  // namespace docguard::advisor
