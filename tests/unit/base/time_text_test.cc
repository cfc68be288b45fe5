// The one way to write a moment: UTC, ISO 8601, seconds or milliseconds.
#include "docguard/base/time_text.h"

#include <gtest/gtest.h>

namespace docguard::base {
namespace {

TEST(TimeText, UtcInIso8601) {
  EXPECT_EQ(utc_text_of_unix_ms(0, TimePrecision::kSeconds), "1970-01-01T00:00:00Z");
  EXPECT_EQ(utc_text_of_unix_ms(1796479200123), "2026-12-05T14:00:00.123Z");
  EXPECT_EQ(utc_text_of_unix_ms(1796479200123, TimePrecision::kSeconds), "2026-12-05T14:00:00Z");
  EXPECT_EQ(utc_text_of_unix_seconds(1796479200.9), "2026-12-05T14:00:00Z");
  EXPECT_EQ(utc_text_of_unix_ms(-1), "1969-12-31T23:59:59.999Z");
  const auto at = std::chrono::system_clock::time_point(std::chrono::milliseconds(1796479200123));
  EXPECT_EQ(utc_text(at), "2026-12-05T14:00:00Z");
  EXPECT_EQ(utc_text(at, TimePrecision::kMilliseconds), "2026-12-05T14:00:00.123Z");
}

}  // namespace
}  // namespace docguard::base
