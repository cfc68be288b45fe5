// The query guardrail's keys of a rule: `require_index`, `max_time_ms`, `max_time_ms_writes`,
// `allow`. Read with the rest of the rule (rules_yaml.cc).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

#include "config_reader.h"
#include "docguard/rules/guardrail_rule.h"

namespace docguard::settings {

// Reads one guardrail key of a rule into `out`; false when `name` is not a guardrail key.
// Throws ConfigError (through `reader`) for a bad value.
bool read_guardrail_key(const ConfigReader& reader, std::string_view name, const YAML::Node& value,
                        const std::string& key, rules::GuardrailRule& out);
inline constexpr std::string_view kGuardrailKeys =
    "require_index, max_time_ms, "
    "max_time_ms_writes, allow";

}  // namespace docguard::settings
