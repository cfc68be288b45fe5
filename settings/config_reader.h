// The one reader of docguard's YAML configuration: every section (the rules, the proxy's,
// introspection's, the advisor's) reads its scalars with these parsers, so a duration, a size or
// a boolean means the same everywhere, and every error reads "FILE:LINE:COL: key 'K': what".
// Private to the settings layer: no other layer sees YAML.
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "docguard/base/enum_names.h"
#include "docguard/settings/config_error.h"

namespace docguard::settings {

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

}  // namespace docguard::settings
