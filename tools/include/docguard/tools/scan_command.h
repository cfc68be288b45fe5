// Entry points of the offline advisor: the `docguard scan` and `docguard validator` subcommands.
//   scan PATH [--config FILE] [--format text|json|html] [--fail-on warn|block]
//     exit 0, 1 when a finding at or above --fail-on exists, 2 on usage or read errors.
//   validator PATH NAMESPACE      (NAMESPACE: db.collection, or collection when unambiguous)
//     prints the collMod command with the $jsonSchema validator; exit 2 on errors.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include "docguard/advisor/settings.h"
#include "docguard/rules/rule_set.h"

namespace docguard::tools {

// What `--config FILE` gives the scan: the `advisor:` thresholds and the file's rules, which are
// applied to every scanned document as if it were inserted. The settings reader provides the
// loader (the program calls the one settings reader); it throws std::exception with a message on
// errors.
struct ScanConfig {
  advisor::AdvisorSettings settings;
  std::shared_ptr<const rules::RuleSet> rules;  // null: no rules applied
};
using ScanConfigLoader = std::function<ScanConfig(const std::string& path)>;

// argv[0] is the subcommand's name ("scan"); output goes to `out`, diagnostics to `err`.
int run_scan(int argc, char** argv, std::ostream& out, std::ostream& err,
             const ScanConfigLoader& loader = {});
int run_validator(int argc, char** argv, std::ostream& out, std::ostream& err);
// The same on std::cout / std::cerr.
int run_scan(int argc, char** argv, const ScanConfigLoader& loader = {});
int run_validator(int argc, char** argv);

}  // namespace docguard::tools
