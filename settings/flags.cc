// The proxy's command-line options over the settings file.
#include <stdexcept>

#include "docguard/settings/settings_reader.h"

namespace docguard::settings {

ProxyConfig build_config(const Flags& flags) {
  ProxyConfig config;
  if (auto it = flags.values.find("config"); it != flags.values.end()) {
    config = load_config_file(it->second);
  } else {
    config.rules = default_rules();
  }
  if (!flags.listen.empty()) {
    config.listen.clear();
    config.listen_unix.clear();
    for (const auto& value : flags.listen) {
      add_listen_address(config, value, "--listen");
    }
  }
  for (const auto& [name, value] : flags.values) {
    if (name == "upstream") {
      set_upstream(config, value);
    } else if (name == "admin") {
      config.admin = parse_host_port(value, "--admin");
    } else if (name == "threads") {
      try {
        size_t used = 0;
        const int n = std::stoi(value, &used);
        if (used != value.size() || n < 0 || n > 256) throw std::out_of_range("threads");
        config.threads = static_cast<unsigned>(n);
      } catch (const std::exception&) {
        throw ConfigError("--threads: expected a number from 0 to 256, got '" + value + "'");
      }
    } else if (name == "log-format") {
      const auto format = kLogFormatNames.value(value);
      if (!format) {
        throw ConfigError("--log-format: expected " + kLogFormatNames.choices() + ", got '" +
                          value + "'");
      }
      config.log_format = *format;
    } else if (name == "tls-cert") {
      config.tls.cert_file = value;
    } else if (name == "tls-key") {
      config.tls.key_file = value;
    } else if (name == "tls-ca") {
      config.tls.ca_file = value;
    } else if (name == "log-level") {
      const auto level = kLogLevelNames.value(value);
      if (!level) {
        throw ConfigError("--log-level: expected " + kLogLevelNames.choices() + ", got '" + value +
                          "'");
      }
      config.log_level = *level;
    }
  }
  if (config.tls.cert_file.empty() != config.tls.key_file.empty()) {
    throw ConfigError("--tls-cert and --tls-key go together");
  }
  // Last: --admin may have moved the listener off loopback.
  settle_admin_access(config);
  return config;
}

}  // namespace docguard::settings
