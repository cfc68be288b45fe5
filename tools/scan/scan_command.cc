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

constexpr const char* kScanUsage =
    "usage: scan PATH|URI [--config FILE] [--format text|json|html] [--fail-on warn|block]\n"
    "            [--sample N] [--db NAME] [--collection NAME] [--credentials-file FILE] [--quiet]\n"
    "  PATH: mongodump output (a directory, gzipped or not, an --archive file, gzipped or not,\n"
    "  or one .bson file). URI: mongodb://... or mongodb+srv://..., read as mongodump reads it\n"
    "  (every document, from a secondary when there is one); --sample N reads about N documents\n"
    "  per collection; the URI's /database, --db and --collection limit the scan;\n"
    "  --credentials-file holds `user: NAME` and `password: SECRET` lines or a connection string.\n"
    "  Exit 1 when a finding reaches --fail-on, 2 on errors.\n";
constexpr const char* kValidatorUsage =
    "usage: validator PATH|URI NAMESPACE [--sample N] [--credentials-file FILE] [--apply]\n"
    "  --apply  after printing the collMod and the census of its validator over the documents\n"
    "           read, run the collMod on the cluster (a mongodb:// URI); says so when the\n"
    "           server refuses it\n";

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

int run_scan(int argc, char** argv, std::ostream& out, std::ostream& err,
             const ScanConfigLoader& loader) {
  advisor::ScanArguments args;
  if (auto parsed = advisor::parse_scan_arguments(argc, argv, &args); !parsed) {
    err << parsed.error().message << "\n" << kScanUsage;
    return 2;
  }
  if (args.help) {
    out << kScanUsage;
    return 0;
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

int run_validator(int argc, char** argv, std::ostream& out, std::ostream& err) {
  // validator SOURCE NAMESPACE [options]: the options are the scan's, for a cluster.
  if (argc < 3 || argv[1][0] == '-' || argv[2][0] == '-') {
    err << kValidatorUsage;
    return 2;
  }
  const std::string ns = argv[2];
  std::vector<char*> scan_argv{argv[0], argv[1]};
  bool apply = false;
  for (int i = 3; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--apply") {
      apply = true;
    } else {
      scan_argv.push_back(argv[i]);
    }
  }
  advisor::ScanArguments args;
  const auto parsed =
      advisor::parse_scan_arguments(static_cast<int>(scan_argv.size()), scan_argv.data(), &args);
  if (!parsed || !args.db.empty() || !args.collection.empty()) {
    err << (parsed ? "validator: the namespace names the collection" : parsed.error().message)
        << "\n"
        << kValidatorUsage;
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

int run_scan(int argc, char** argv, const ScanConfigLoader& loader) {
  return run_scan(argc, argv, std::cout, std::cerr, loader);
}
int run_validator(int argc, char** argv) { return run_validator(argc, argv, std::cout, std::cerr); }

}  // namespace docguard::tools
