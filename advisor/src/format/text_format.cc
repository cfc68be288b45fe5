#include "docguard/advisor/text_format.h"

#include <cstdio>

namespace docguard::advisor {

std::string with_commas(uint64_t value) {
  const std::string digits = std::to_string(value);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string human_bytes(uint64_t bytes) {
  char text[32];
  if (bytes < 1000) return std::to_string(bytes) + " B";
  if (bytes < 1000ull * 1000) {
    std::snprintf(text, sizeof text, "%.1f kB", bytes / 1e3);
  } else if (bytes < 1000ull * 1000 * 1000) {
    std::snprintf(text, sizeof text, "%.1f MB", bytes / 1e6);
  } else {
    std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
  }
  return text;
}

std::string human_duration_ms(int64_t ms) {
  struct Unit {
    int64_t ms;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{86400000LL * 7, "week"}, {86400000LL, "day"}, {3600000LL, "h"},
                                    {60000LL, "min"},         {1000LL, "s"},       {1LL, "ms"}};
  for (const Unit& unit : kUnits) {
    if (ms >= unit.ms) {
      char text[48];
      std::snprintf(text, sizeof text, "%.3g %s", static_cast<double>(ms) / unit.ms, unit.name);
      return text;
    }
  }
  return "0 ms";
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace docguard::advisor
