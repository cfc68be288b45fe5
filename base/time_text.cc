#include "docguard/base/time_text.h"

#include <cstdio>
#include <ctime>

namespace docguard::base {

std::string utc_text_of_unix_ms(int64_t unix_ms, TimePrecision precision) {
  // Floor division, so a moment before 1970 keeps its millisecond within its second.
  int64_t seconds = unix_ms / 1000;
  int64_t millis = unix_ms % 1000;
  if (millis < 0) {
    millis += 1000;
    --seconds;
  }
  const auto t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[48];
  if (precision == TimePrecision::kMilliseconds) {
    std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>(millis));
  } else {
    std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  }
  return text;
}

std::string utc_text(std::chrono::system_clock::time_point at, TimePrecision precision) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch());
  return utc_text_of_unix_ms(ms.count(), precision);
}

std::string utc_text_of_unix_seconds(double unix_seconds) {
  return utc_text_of_unix_ms(static_cast<int64_t>(unix_seconds * 1000), TimePrecision::kSeconds);
}

}  // namespace docguard::base
