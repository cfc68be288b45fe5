// The log line formats (--log-format text|json). Both write one line per log call whatever the
// message and its fields hold: client text is escaped, never written raw.
#pragma once

#include <spdlog/formatter.h>

#include <memory>

#include "docguard/proxy/config.h"

namespace docguard::proxy {

// text: `2026-01-01T00:00:00.000 warn message: key=value ...`;
// json: `{"ts":"2026-01-01T00:00:00.000000Z","level":"warn","msg":"message","key":"value",...}`.
std::unique_ptr<spdlog::formatter> make_log_formatter(LogFormat format);

}  // namespace docguard::proxy
