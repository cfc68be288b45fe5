#include "config_reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

namespace docguard::settings {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// Splits "12.5MiB" into a non-negative number and a suffix.
std::optional<std::pair<double, std::string_view>> number_and_suffix(std::string_view text) {
  text = trim(text);
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' ||
                             text[i] == '_' || text[i] == ',')) {
    ++i;
  }
  std::string digits;
  for (char c : text.substr(0, i)) {
    if (c != '_' && c != ',') digits.push_back(c);
  }
  if (digits.empty()) return std::nullopt;
  double value = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return std::make_pair(value, trim(text.substr(i)));
}

}  // namespace

std::optional<double> parse_byte_size(std::string_view text) {
  auto parsed = number_and_suffix(text);
  if (!parsed) return std::nullopt;
  auto [value, suffix] = *parsed;
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"", 1},    {"b", 1},   {"kb", 1e3},     {"mb", 1e6},        {"gb", 1e9},
      {"k", 1e3}, {"m", 1e6}, {"kib", 1024.0}, {"mib", 1048576.0}, {"gib", 1073741824.0}};
  for (const auto& [name, factor] : kUnits) {
    if (iequals(suffix, name)) return std::floor(value * factor);
  }
  return std::nullopt;
}

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  auto parsed = number_and_suffix(text);
  if (!parsed) return std::nullopt;
  auto [value, suffix] = *parsed;
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"ms", 1}, {"s", 1e3}, {"m", 60e3}, {"min", 60e3}, {"h", 3600e3}, {"d", 86400e3}};
  for (const auto& [name, factor] : kUnits) {
    if (iequals(suffix, name)) {
      // Past what milliseconds hold in 64 bits the cast would be undefined: not a duration.
      const double millis = value * factor;
      if (!(millis < 9.2e18)) return std::nullopt;
      return std::chrono::milliseconds(static_cast<int64_t>(millis));
    }
  }
  return std::nullopt;
}

std::optional<bool> parse_boolean(std::string_view text) {
  for (std::string_view yes : {"true", "yes", "on"}) {
    if (iequals(text, yes)) return true;
  }
  for (std::string_view no : {"false", "no", "off"}) {
    if (iequals(text, no)) return false;
  }
  return std::nullopt;
}

void ConfigReader::fail(const YAML::Node& node, const std::string& key,
                        const std::string& what) const {
  const YAML::Mark mark = node.Mark();
  std::string where = file_;
  if (!mark.is_null()) {
    where += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  }
  throw ConfigError(where + ": key '" + key + "': " + what);
}

void ConfigReader::check_keys(const YAML::Node& map, std::initializer_list<std::string_view> known,
                              const std::string& prefix) const {
  if (!map.IsMap()) fail(map, prefix.empty() ? "(top level)" : prefix, "expected a mapping");
  for (const auto& kv : map) {
    const auto key = kv.first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      fail(kv.first, prefix.empty() ? key : prefix + "." + key, "unknown key");
    }
  }
}

std::string ConfigReader::scalar(const YAML::Node& node, const std::string& key) const {
  if (!node.IsScalar()) fail(node, key, "expected a single value");
  return node.Scalar();
}

double ConfigReader::count(const YAML::Node& node, const std::string& key, double max) const {
  std::string s = scalar(node, key);
  auto v = number_and_suffix(s);
  if (!v || !v->second.empty() || v->first != std::floor(v->first) || v->first > max) {
    fail(node, key, "expected a non-negative integer, got '" + s + "'");
  }
  return v->first;
}

double ConfigReader::bytes(const YAML::Node& node, const std::string& key) const {
  std::string s = scalar(node, key);
  auto v = parse_byte_size(s);
  if (!v) fail(node, key, "expected a size such as 2097152, 2MB or 2MiB, got '" + s + "'");
  return *v;
}

double ConfigReader::ratio(const YAML::Node& node, const std::string& key) const {
  std::string s = scalar(node, key);
  auto v = number_and_suffix(s);
  if (!v || !v->second.empty() || v->first > 1.0) {
    fail(node, key, "expected a number between 0 and 1, got '" + s + "'");
  }
  return v->first;
}

bool ConfigReader::boolean(const YAML::Node& node, const std::string& key) const {
  std::string s = scalar(node, key);
  auto v = parse_boolean(s);
  if (!v) fail(node, key, "expected true or false, got '" + s + "'");
  return *v;
}

std::chrono::milliseconds ConfigReader::duration(const YAML::Node& node,
                                                 const std::string& key) const {
  std::string s = scalar(node, key);
  auto v = parse_duration(s);
  if (!v) {
    fail(node, key,
         "expected a duration with a unit (" + std::string(kDurationUnits) +
             "), such as 500ms, 10s or 5m, got '" + s + "'");
  }
  return *v;
}

}  // namespace docguard::settings
