// `docguard replay --dry-run`: the recording walked as a replay would walk it, connecting to
// nothing. Each request is printed with what would be sent (command, database, namespace, the
// live session standing for its recorded lsid, the request whose live cursor a getMore would
// continue) or why it would be skipped; the counts are a replay's.
#pragma once

#include "docguard/base/expected.h"
#include "replay_outline.h"
#include "replay_runner.h"

namespace docguard::tools {

base::Expected<ReplayOutcome> dry_run_recording(const ReplayOptions& options,
                                                const RecordingOutline& outline);

}  // namespace docguard::tools
