// A rule set written as YAML in a test, read by the one settings reader, as a docguard reads its
// config file: `parse` gives the rule set (a ConfigError escapes), `error_of` the error's text,
// or "(no error)" when the YAML loads.
#pragma once

#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>

#include "docguard/rules/rule_set.h"
#include "docguard/settings/yaml_settings.h"

namespace docguard::testing {

inline std::shared_ptr<const rules::RuleSet> parse(const std::string& yaml,
                                                   const std::string& file = "test.yaml") {
  return settings::parse_rules(YAML::Load(yaml), file);
}

inline std::string error_of(const std::string& yaml, const std::string& file = "test.yaml") {
  try {
    parse(yaml, file);
  } catch (const settings::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace docguard::testing
