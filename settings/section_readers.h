// The readers of the file's sections beside the rules (rules_yaml.cc): each turns its mapping
// into its layer's plain struct, with errors naming the key and the line.
#pragma once

#include <yaml-cpp/yaml.h>

#include "config_reader.h"
#include "docguard/advisor/settings.h"
#include "docguard/introspection/introspection_settings.h"
#include "docguard/settings/proxy_settings.h"
#include "docguard/settings/recording_settings.h"

namespace docguard::settings {

// `listen:` as the file gives it: one address, or a list whose entries are addresses or
// mappings {unix: PATH, mode, owner, group}. Replaces the default listen address.
void apply_listen_yaml(const ConfigReader& reader, const YAML::Node& node, ProxyConfig& config);
// `introspection:`.
void apply_introspection_yaml(const ConfigReader& reader, const YAML::Node& node,
                              introspection::IntrospectionSettings& settings);
// `advisor:`, field by field under the struct's own names.
void apply_advisor_yaml(const ConfigReader& reader, const YAML::Node& node,
                        advisor::AdvisorSettings& settings);
// `recording:` (recording_yaml.cc).
void apply_recording_yaml(const ConfigReader& reader, const YAML::Node& node,
                          RecordingSettings& settings);

}  // namespace docguard::settings
