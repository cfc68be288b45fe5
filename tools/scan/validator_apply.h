// `docguard validator ... --apply` (validator_apply.cc). Private to the tools library.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "docguard/advisor/dump_reader.h"
#include "docguard/advisor/scan_arguments.h"

namespace docguard::tools {

// Reads the source again into a visitor; false after printing why.
using ReadSource = std::function<bool(advisor::DumpVisitor&, std::string* source)>;

// Prints the census of `collmod`'s validator over the documents of `ns`, then runs collMod on
// the cluster. 0 when applied, 3 when the server refused it, 2 on other errors.
int apply_validator(const advisor::ScanArguments& args, const std::string& ns,
                    const std::string& collmod, const ReadSource& read, std::ostream& out,
                    std::ostream& err);

}  // namespace docguard::tools
