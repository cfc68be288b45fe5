// The one reader of docguard's YAML configuration: every section (rules here, the proxy's
// settings in proxy/app/config.cc) reads its scalars with these parsers, so a duration, a size or a
// boolean means the same everywhere, and every error reads "FILE:LINE:COL: key 'K': what".
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "docguard/base/enum_names.h"

namespace docguard::rules {

// A configuration error. what() reads "FILE:LINE:COLUMN: key 'rules[0].max_array_length': ...".
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "2MiB", "512 KB", "1048576" -> bytes; nullopt when malformed.
std::optional<double> parse_byte_size(std::string_view text);
// "500ms", "10s", "5m", "1h" -> milliseconds. The unit is required: a bare number is refused
// (nullopt), since "90" would read as seconds to some and milliseconds to others.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);
inline constexpr std::string_view kDurationUnits = "ms, s, m, h or d";
// true/yes/on, false/no/off; nullopt otherwise.
std::optional<bool> parse_boolean(std::string_view text);

class ConfigReader {
 public:
  explicit ConfigReader(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }

  [[noreturn]] void fail(const YAML::Node& node, const std::string& key,
                         const std::string& what) const;
  // Throws unless `map` is a mapping whose keys are all in `known`.
  void check_keys(const YAML::Node& map, std::initializer_list<std::string_view> known,
                  const std::string& prefix) const;

  std::string scalar(const YAML::Node& node, const std::string& key) const;
  double count(const YAML::Node& node, const std::string& key, double max = 1e15) const;
  double bytes(const YAML::Node& node, const std::string& key) const;
  double ratio(const YAML::Node& node, const std::string& key) const;
  bool boolean(const YAML::Node& node, const std::string& key) const;
  std::chrono::milliseconds duration(const YAML::Node& node, const std::string& key) const;
  // One of the names in `names` (base/enum_names.h), as its value; the error lists them all.
  template <typename E, size_t N>
  E choice(const YAML::Node& node, const std::string& key,
           const base::EnumNames<E, N>& names) const {
    const std::string s = scalar(node, key);
    if (auto v = names.value(s)) return *v;
    fail(node, key, "expected " + names.choices() + ", got '" + s + "'");
  }

 private:
  std::string file_;
};

}  // namespace docguard::rules
