// The settings reader: the YAML file and the command-line flags into typed settings. docguard
// starts, checks a configuration (--check-config) and reloads its rules (SIGHUP) through these
// calls, so all three read a file the same way. Only the program's start and its reload include
// this (tests/layering checks it).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "docguard/rules/rule_set.h"
#include "docguard/settings/flags.h"
#include "docguard/settings/proxy_settings.h"

namespace docguard::settings {

// Reads a YAML file (proxy settings + rules). Errors name the file, line and key.
ProxyConfig load_config_file(const std::string& path);

// The rules without a file: the built-in rule for "*" (rules/rule_set.h).
std::shared_ptr<const rules::RuleSet> default_rules();

// The file (--config or --check-config FILE) when given, then the flags over it. Throws
// ConfigError naming the key and line, or the flag.
ProxyConfig build_config(const Flags& flags);

}  // namespace docguard::settings
