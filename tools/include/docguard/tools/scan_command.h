// Entry points of the offline advisor: the `docguard scan` and `docguard validator` subcommands,
// run with the arguments the program's command line (app/) read.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include "docguard/advisor/scan_arguments.h"
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

// `docguard scan`: exit 0, 1 when a finding at or above --fail-on exists, 2 on argument or read
// errors; the report goes to `out`, diagnostics to `err`.
int run_scan(const advisor::ScanArguments& args, std::ostream& out, std::ostream& err,
             const ScanConfigLoader& loader = {});
// `docguard validator SOURCE NAMESPACE [--apply]`: the collMod with the $jsonSchema validator
// the collection's documents give (NAMESPACE: db.collection, or collection when unambiguous);
// with `apply`, runs it on the cluster. Exit 2 on errors.
int run_validator(advisor::ScanArguments args, const std::string& ns, bool apply, std::ostream& out,
                  std::ostream& err);

}  // namespace docguard::tools
