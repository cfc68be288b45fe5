// Temporary executable until `docguard scan` / `docguard validator` are wired as subcommands:
//   docguard-scan PATH [options]            (the same as `scan PATH [options]`)
//   docguard-scan validator PATH NAMESPACE
#include <cstring>

#include "docguard/advisor/scan_command.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "validator") == 0) {
    return docguard::advisor::run_validator(argc - 1, argv + 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "scan") == 0) {
    return docguard::advisor::run_scan(argc - 1, argv + 1);
  }
  return docguard::advisor::run_scan(argc, argv);
}
