// docguard's command line: one tree (CLI11) for the proxy's options and every subcommand (scan,
// validator, whatif, replay), each bound to the arguments its code takes; the help of each is
// generated from the tree, the admin endpoints from their table.
#pragma once

#include <iosfwd>
#include <string>

#include "docguard/advisor/scan_arguments.h"
#include "docguard/settings/flags.h"
#include "docguard/tools/replay_command.h"
#include "docguard/tools/whatif.h"

namespace docguard::app {

struct CommandLine {
  enum class Run { kProxy, kScan, kValidator, kWhatif, kReplay, kExit };
  Run run = Run::kProxy;
  int exit_code = 0;  // kExit: after --help, --version or a refused command line
  settings::Flags proxy;
  advisor::ScanArguments scan;  // scan, and validator's source and cluster options
  std::string validator_namespace;
  bool validator_apply = false;
  tools::WhatifArguments whatif;
  tools::ReplayOptions replay;
};

// Reads argv. Help and the version go to `out`; a refused command line is told on `err` with
// exit code 2 for a subcommand's, 1 for the proxy's.
CommandLine read_command_line(int argc, const char* const* argv, std::ostream& out,
                              std::ostream& err);

}  // namespace docguard::app
