#include "docguard/tools/scan_command.h"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cluster_scan_command.h"
#include "docguard/advisor/detectors.h"
#include "docguard/advisor/dump_profiler.h"
#include "docguard/advisor/report.h"
#include "docguard/advisor/rule_findings.h"
#include "docguard/advisor/scan_arguments.h"
#include "docguard/advisor/validator.h"
#include "validator_apply.h"

namespace docguard::tools {
namespace {

// Reads the dump or the cluster `args.source` names; false after printing why.
bool read_source(const advisor::ScanArguments& args, const char* command,
                 advisor::DumpVisitor& visitor, std::ostream& err, std::string* source) {
  if (advisor::is_cluster_uri(args.source))
    return scan_cluster(args, command, visitor, err, source);
  *source = args.source;
  if (auto read = advisor::read_dump(args.source, visitor); !read) {
    err << command << ": " << read.error().to_string() << "\n";
    return false;
  }
  return true;
}

}  // namespace

int run_scan(const advisor::ScanArguments& args, std::ostream& out, std::ostream& err,
             const ScanConfigLoader& loader) {
  if (auto usable = advisor::check_scan_arguments(args); !usable) {
    err << "scan: " << usable.error().message << "\n";
    return 2;
  }
  ScanConfig config;
  if (!args.config_path.empty()) {
    if (!loader) {
      err << "scan: --config is not supported here\n";
      return 2;
    }
    try {
      config = loader(args.config_path);
    } catch (const std::exception& e) {
      err << "scan: " << e.what() << "\n";
      return 2;
    }
  }
  const advisor::AdvisorSettings& settings = config.settings;
  advisor::DumpProfiler profiler(settings);
  std::unique_ptr<advisor::RuleCheckingVisitor> rule_checker;
  if (config.rules)
    rule_checker = std::make_unique<advisor::RuleCheckingVisitor>(profiler, config.rules);
  advisor::DumpVisitor& visitor =
      rule_checker ? static_cast<advisor::DumpVisitor&>(*rule_checker) : profiler;
  advisor::ReportInput report;
  if (!read_source(args, "scan", visitor, err, &report.source)) return 2;
  report.profiles = profiler.profiles();
  report.findings = advisor::run_offline_detectors(report.profiles, settings);
  if (rule_checker) {
    rule_checker->append_findings(report.findings);
    advisor::sort_findings(report.findings);
  }
  report.settings = settings;
  out << advisor::render(report, args.format);
  if (args.fail_on) {
    for (const advisor::Finding& f : report.findings) {
      if (f.severity >= *args.fail_on) return 1;
    }
  }
  return 0;
}

int run_validator(advisor::ScanArguments args, const std::string& ns, bool apply, std::ostream& out,
                  std::ostream& err) {
  if (auto usable = advisor::check_scan_arguments(args); !usable) {
    err << "validator: " << usable.error().message << "\n";
    return 2;
  }
  if (advisor::is_cluster_uri(args.source)) {
    // Read only that collection; a bare collection name needs the URI's database.
    args.quiet = true;
    const auto dot = ns.find('.');
    if (dot != std::string::npos) {
      args.db = ns.substr(0, dot);
      args.collection = ns.substr(dot + 1);
    } else {
      args.collection = ns;
    }
  }
  advisor::AdvisorSettings settings;
  advisor::DumpProfiler profiler(settings);
  std::string source;
  if (!read_source(args, "validator", profiler, err, &source)) return 2;
  const advisor::CollectionProfile* match = nullptr;
  int matches = 0;
  for (const advisor::CollectionProfile* p : profiler.profiles()) {
    if (p->ns() == ns || (ns.find('.') == std::string::npos && p->collection() == ns)) {
      match = p;
      ++matches;
    }
  }
  if (matches != 1) {
    err << "validator: " << (matches ? "ambiguous" : "no such") << " namespace in " << source
        << ": " << ns << "\n";
    return 2;
  }
  const std::string collmod = advisor::build_collmod_command(*match, settings);
  out << collmod;
  if (!apply) return 0;
  return apply_validator(
      args, ns, collmod,
      [&](advisor::DumpVisitor& visitor, std::string* read_from) {
        return read_source(args, "validator", visitor, err, read_from);
      },
      out, err);
}

}  // namespace docguard::tools
