// `docguard replay`: runs a recording (docs/recording.md) against another cluster and compares
// its answers with the recorded ones, per query shape.
//   replay --recording DIR --target URI [--speed 1|4|max] [--read-only] [--report-dir DIR]
// Exit 0 when no shape differs, 1 when one does, 2 on usage or read/write errors.
#pragma once

namespace docguard::tools {

// argv[0] is the subcommand's name ("replay").
int run_replay(int argc, char** argv);

}  // namespace docguard::tools
