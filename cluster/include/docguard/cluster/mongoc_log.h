// libmongoc logs through one process-wide handler, by default to stdout/stderr: URI warnings
// ("Unsupported URI option"), and a DEBUG line from the monitor for each failed heartbeat. The
// proxy routes them into its own logger with this.
#pragma once

#include <functional>
#include <string_view>

namespace docguard::cluster {

enum class MongocLogLevel { kError, kCritical, kWarning, kMessage, kInfo, kDebug, kTrace };

using MongocLogHandler =
    std::function<void(MongocLogLevel level, std::string_view domain, std::string_view message)>;

// Installs `handler` for all of libmongoc (process-wide). It runs on whichever thread logs,
// monitor threads included, so it must be thread-safe. An empty handler discards everything.
void set_mongoc_log_handler(MongocLogHandler handler);

}  // namespace docguard::cluster
