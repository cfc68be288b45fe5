// The YAML configuration (proxy settings and rules): any text gives a config or a ConfigError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "docguard/proxy/config.h"
#include "docguard/rules/rule_set.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    docguard::proxy::ProxyConfig config;
    docguard::proxy::apply_yaml(YAML::Load(text), "fuzz.yaml", config);
  } catch (const docguard::proxy::ConfigError&) {
  } catch (const docguard::rules::ConfigError&) {
  } catch (const YAML::Exception&) {
  }
  return 0;
}
