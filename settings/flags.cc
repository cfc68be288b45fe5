// The proxy's command-line flags over the settings file.
#include <algorithm>
#include <stdexcept>

#include "docguard/settings/settings_reader.h"

namespace docguard::settings {

Flags parse_flags(int argc, char** argv) {
  static const std::vector<std::string> kValued = {"listen",  "upstream",   "admin",     "config",
                                                   "threads", "log-format", "log-level", "tls-cert",
                                                   "tls-key", "tls-ca"};
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) throw ConfigError("unexpected argument '" + arg + "'");
    std::string name = arg.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (name == "help") {
      flags.help = true;
    } else if (name == "version") {
      flags.version = true;
    } else if (name == "check-config") {
      flags.check_config = true;
      if (has_value) {
        flags.values["config"] = value;
      } else if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) {
        flags.values["config"] = argv[++i];
      }
    } else if (std::find(kValued.begin(), kValued.end(), name) != kValued.end()) {
      if (!has_value) {
        if (i + 1 >= argc) throw ConfigError("--" + name + " needs a value");
        value = argv[++i];
      }
      if (name == "listen") {
        flags.listen.push_back(value);
      } else {
        flags.values[name] = value;
      }
    } else {
      throw ConfigError("unknown option --" + name + " (see --help)");
    }
  }
  return flags;
}

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
  return config;
}

}  // namespace docguard::settings
