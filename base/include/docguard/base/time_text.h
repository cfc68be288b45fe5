// docguard's one way to write a moment: UTC in ISO 8601 ("2026-12-05T14:00:00Z", or with
// milliseconds "2026-12-05T14:00:00.123Z"), as reports, /status and recordings show it. The log
// lines' time is the logger's own pattern (proxy/app/log_format.cc).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace docguard::base {

enum class TimePrecision : uint8_t { kSeconds, kMilliseconds };

std::string utc_text(std::chrono::system_clock::time_point at,
                     TimePrecision precision = TimePrecision::kSeconds);
// A moment given as milliseconds or (fractional) seconds since the Unix epoch.
std::string utc_text_of_unix_ms(int64_t unix_ms,
                                TimePrecision precision = TimePrecision::kMilliseconds);
std::string utc_text_of_unix_seconds(double unix_seconds);

}  // namespace docguard::base
