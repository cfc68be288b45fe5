// The YAML configuration (proxy settings and rules): any text gives a config or a ConfigError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "docguard/settings/yaml_settings.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    docguard::settings::ProxyConfig config;
    docguard::settings::apply_yaml(YAML::Load(text), "fuzz.yaml", config);
  } catch (const docguard::settings::ConfigError&) {
  } catch (const YAML::Exception&) {
  }
  return 0;
}
