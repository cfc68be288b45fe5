// Entry points of the offline advisor, shaped as subcommands (the coordinator wires them as
// `docguard scan` and `docguard validator`; until then `docguard-scan` wraps them).
//   scan PATH [--config FILE] [--format text|json|html] [--fail-on warn|block]
//     exit 0, 1 when a finding at or above --fail-on exists, 2 on usage or read errors.
//   validator PATH NAMESPACE      (NAMESPACE: db.collection, or collection when unambiguous)
//     prints the collMod command with the $jsonSchema validator; exit 2 on errors.
#pragma once

#include <iosfwd>

namespace docguard::advisor {

// argv[0] is the subcommand's name ("scan"); output goes to `out`, diagnostics to `err`.
int run_scan(int argc, char** argv, std::ostream& out, std::ostream& err);
int run_validator(int argc, char** argv, std::ostream& out, std::ostream& err);
// The same on std::cout / std::cerr.
int run_scan(int argc, char** argv);
int run_validator(int argc, char** argv);

}  // namespace docguard::advisor
