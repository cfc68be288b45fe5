// The settings reader's YAML entry points, for the reader's own tests and the config fuzz
// target: a parsed document into typed settings. docguard itself reads files through
// settings_reader.h; no other layer includes this (tests/layering checks it).
#pragma once

#include <yaml-cpp/yaml.h>

#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "docguard/rules/rule_set.h"
#include "docguard/settings/proxy_settings.h"

namespace docguard::settings {

// The top-level keys of the rule language; the proxy's keys are the others the file may hold,
// and a key in neither set is refused.
inline constexpr std::array<std::string_view, 4> kRuleKeys = {"mode", "rules", "tracking",
                                                              "candidate_rules"};

// Parses the rules part of a configuration document (rules/rule_set.h says how rules combine).
// Keys not in kRuleKeys are left to the caller. Throws ConfigError naming file, line and key.
std::shared_ptr<const rules::RuleSet> parse_rules(const YAML::Node& root,
                                                  const std::string& file_name);

// Applies every key of an already-parsed YAML document onto `config`, the rules included.
void apply_yaml(const YAML::Node& root, const std::string& file_name, ProxyConfig& config);

}  // namespace docguard::settings
