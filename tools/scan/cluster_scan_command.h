// The live half of `docguard scan` and `docguard validator`: a cluster read with progress lines
// on stderr, for the command-line entry points in scan_command.cc.
#pragma once

#include <iosfwd>
#include <string>

#include "docguard/advisor/dump_reader.h"
#include "docguard/advisor/scan_arguments.h"

namespace docguard::tools {

// Reads the cluster `args.source` names into `visitor`; progress and notes go to `err` unless
// args.quiet. On failure prints "COMMAND: URI: why" (no credentials) and returns false. `source`
// receives what the report names: the URI without credentials.
bool scan_cluster(const advisor::ScanArguments& args, const char* command,
                  advisor::DumpVisitor& visitor, std::ostream& err, std::string* source);

}  // namespace docguard::tools
