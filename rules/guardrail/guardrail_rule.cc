#include "docguard/rules/guardrail_rule.h"

#include <algorithm>
#include <charconv>

#include "docguard/rules/rule_set.h"

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

constexpr int64_t kMaxTimeLimitMs = 24LL * 3600 * 1000;

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

bool read_guardrail_key(const ConfigReader& reader, std::string_view name, const YAML::Node& value,
                        const std::string& key, GuardrailRule& out) {
  if (name == "require_index") {
    out.require_index = reader.boolean(value, key);
  } else if (name == "max_time_ms") {
    const double ms = reader.count(value, key, static_cast<double>(kMaxTimeLimitMs));
    if (ms < 1) reader.fail(value, key, "must be at least 1 (leave the key out for none)");
    out.max_time_ms = static_cast<int64_t>(ms);
  } else if (name == "max_time_ms_writes") {
    out.max_time_ms_writes = reader.boolean(value, key);
  } else if (name == "allow") {
    if (!value.IsSequence()) {
      reader.fail(value, key, "expected a list of {shape, owner, until} entries");
    }
    for (size_t i = 0; i < value.size(); ++i) {
      const YAML::Node& entry = value[i];
      const std::string entry_key = key + "[" + std::to_string(i) + "]";
      reader.check_keys(entry, {"shape", "owner", "until"}, entry_key);
      AllowedShape allowed;
      allowed.line = entry.Mark().is_null() ? 0 : entry.Mark().line + 1;
      for (const char* required : {"shape", "owner", "until"}) {
        if (!entry[required]) {
          reader.fail(entry, entry_key + "." + required,
                      "missing; an exception needs the shape it tolerates, an owner and an end "
                      "date");
        }
      }
      allowed.shape = reader.scalar(entry["shape"], entry_key + ".shape");
      allowed.owner = reader.scalar(entry["owner"], entry_key + ".owner");
      allowed.until = reader.scalar(entry["until"], entry_key + ".until");
      if (allowed.shape.empty()) reader.fail(entry["shape"], entry_key + ".shape", "is empty");
      if (allowed.owner.empty()) reader.fail(entry["owner"], entry_key + ".owner", "is empty");
      allowed.expires_unix_ms = end_of_day_unix_ms(allowed.until);
      if (allowed.expires_unix_ms < 0) {
        reader.fail(entry["until"], entry_key + ".until",
                    "expected a date written YYYY-MM-DD, got '" + allowed.until + "'");
      }
      out.allow.push_back(std::move(allowed));
    }
  } else {
    return false;
  }
  return true;
}

void add_guardrail(GuardrailLimits& limits, const Rule& rule) {
  const GuardrailRule& g = rule.guardrail;
  if (g.require_index && rule.action > limits.require_index) {
    limits.require_index = rule.action;
    limits.rule_name = rule.id.empty() ? rule.match : rule.id;
    limits.match = rule.match;
    limits.line = rule.line;
    limits.rule = rule.index;
  }
  if (g.require_index) limits.allow.insert(limits.allow.end(), g.allow.begin(), g.allow.end());
  if (g.max_time_ms > 0 && (limits.max_time_ms == 0 || g.max_time_ms < limits.max_time_ms)) {
    limits.max_time_ms = g.max_time_ms;
  }
  limits.max_time_ms_writes = limits.max_time_ms_writes || g.max_time_ms_writes;
}

}  // namespace docguard::rules
