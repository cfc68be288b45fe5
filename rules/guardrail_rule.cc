#include "docguard/rules/guardrail_rule.h"

#include <algorithm>
#include <charconv>

namespace docguard::rules {

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool parse_digits(std::string_view text, unsigned* out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

int64_t end_of_day_unix_ms(std::string_view date) {
  unsigned y = 0, m = 0, d = 0;
  if (date.size() != 10 || date[4] != '-' || date[7] != '-' ||
      !parse_digits(date.substr(0, 4), &y) || !parse_digits(date.substr(5, 2), &m) ||
      !parse_digits(date.substr(8, 2), &d) || m < 1 || m > 12 || d < 1 || d > 31) {
    return -1;
  }
  static constexpr unsigned kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > kDays[m - 1] || (m == 2 && d == 29 && !leap)) return -1;
  return (days_from_civil(y, m, d) + 1) * 86'400'000;
}

}  // namespace docguard::rules
