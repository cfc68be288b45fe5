// The docguard process: io_context threads, the client listener, the admin listener, signals.
#pragma once

#include "docguard/proxy/config.h"

namespace docguard::proxy {

// Runs until SIGTERM/SIGINT, then drains in-flight requests (up to shutdown_timeout).
// Returns the process exit code.
int run_server(ProxyConfig config);

}  // namespace docguard::proxy
