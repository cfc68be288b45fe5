// The settings file: every top-level key checked, each section read by its reader (the
// rules' in rules_yaml.cc, the listeners', introspection's and the advisor's beside this one).
#include <algorithm>
#include <fstream>

#include "docguard/settings/settings_reader.h"
#include "docguard/settings/yaml_settings.h"
#include "section_readers.h"

namespace docguard::settings {
namespace {

// A HOST:PORT scalar; errors carry the key's position like every other.
HostPort host_port(const ConfigReader& r, const YAML::Node& node, const std::string& key) {
  try {
    return parse_host_port(r.scalar(node, key), key);
  } catch (const ConfigError& e) {
    r.fail(node, key, e.what());
  }
}

// The names `persona.type` accepts.
constexpr auto kPersonaNames = base::enum_names<Persona>(
    {{Persona::kMongos, "mongos"}, {Persona::kReplicaSet, "replica_set"}}, "replica_set");

}  // namespace

void apply_yaml(const YAML::Node& root, const std::string& file, ProxyConfig& config) {
  if (!root || root.IsNull()) {
    // An empty (or comment-only) file: every default, including the default rules.
    config.rules = parse_rules(YAML::Node(), file);
    return;
  }
  const ConfigReader r(file);
  if (!root.IsMap()) r.fail(root, "(top level)", "expected a mapping");
  for (const auto& kv : root) {
    const auto key = kv.first.as<std::string>();
    static constexpr std::string_view kProxyKeys[] = {
        "listen",  "upstream", "admin",     "threads",       "log_format", "log_level",
        "limits",  "persona",  "tls",       "upstream_tls",  "advisor",    "introspection",
        "metrics", "workload", "recording", "upstream_auth", "errors"};
    if (std::find(std::begin(kProxyKeys), std::end(kProxyKeys), key) == std::end(kProxyKeys) &&
        std::find(kRuleKeys.begin(), kRuleKeys.end(), key) == kRuleKeys.end()) {
      r.fail(kv.first, key, "unknown key");
    }
  }

  if (auto n = root["listen"]) apply_listen_yaml(r, n, config);
  if (auto n = root["upstream"]) {
    try {
      set_upstream(config, r.scalar(n, "upstream"));
    } catch (const ConfigError& e) {
      r.fail(n, "upstream", e.what());
    }
  }
  if (auto n = root["upstream_auth"]) {
    config.upstream_auth = r.choice(n, "upstream_auth", kUpstreamAuthNames);
  }
  if (auto n = root["errors"]) {
    r.check_keys(n, {"reveal_rule_source"}, "errors");
    if (auto v = n["reveal_rule_source"]) {
      config.reveal_rule_source = r.boolean(v, "errors.reveal_rule_source");
    }
  }
  if (auto n = root["admin"]) {
    if (n.IsMap()) {
      r.check_keys(n, {"listen", "token", "token_file", "allowed_hosts", "allow_without_token"},
                   "admin");
      if (auto l = n["listen"]) config.admin = host_port(r, l, "admin.listen");
      if (auto t = n["token"]) config.admin_token = r.scalar(t, "admin.token");
      if (auto t = n["token_file"]) config.admin_token_file = r.scalar(t, "admin.token_file");
      if (auto t = n["token"]; t && n["token_file"]) {
        r.fail(t, "admin.token", "give admin.token or admin.token_file, not both");
      }
      if (auto o = n["allow_without_token"]) {
        config.admin_allow_without_token = r.boolean(o, "admin.allow_without_token");
      }
      if (auto h = n["allowed_hosts"]) {
        if (h.IsScalar()) {
          config.admin_allowed_hosts.push_back(r.scalar(h, "admin.allowed_hosts"));
        } else if (h.IsSequence()) {
          for (const auto& name : h) {
            config.admin_allowed_hosts.push_back(r.scalar(name, "admin.allowed_hosts"));
          }
        } else {
          r.fail(h, "admin.allowed_hosts", "expected a host name or a list of them");
        }
      }
    } else {
      config.admin = host_port(r, n, "admin");
    }
  }
  if (auto n = root["threads"]) config.threads = static_cast<unsigned>(r.count(n, "threads", 256));
  if (auto n = root["log_format"]) {
    config.log_format = r.choice(n, "log_format", kLogFormatNames);
  }
  if (auto n = root["log_level"]) config.log_level = r.choice(n, "log_level", kLogLevelNames);
  if (auto n = root["workload"]) {
    r.check_keys(n, {"max_shapes"}, "workload");
    if (auto v = n["max_shapes"]) {
      config.max_workload_shapes = static_cast<size_t>(r.count(v, "workload.max_shapes", 100'000));
    }
  }
  if (auto n = root["metrics"]) {
    r.check_keys(n, {"max_series"}, "metrics");
    if (auto v = n["max_series"]) {
      config.max_metric_series = static_cast<size_t>(r.count(v, "metrics.max_series", 10'000'000));
      if (config.max_metric_series < 1'000) {
        r.fail(v, "metrics.max_series", "expected at least 1000 (docguard's own series)");
      }
    }
  }
  if (auto n = root["limits"]) {
    r.check_keys(n,
                 {"max_message_bytes", "max_connections", "connect_timeout", "idle_timeout",
                  "handshake_timeout", "frame_timeout", "upstream_timeout", "shutdown_timeout"},
                 "limits");
    if (auto v = n["max_message_bytes"]) {
      const double bytes = r.bytes(v, "limits.max_message_bytes");
      if (bytes < 16 || bytes > 2'000'000'000.0) {
        r.fail(v, "limits.max_message_bytes", "expected a size between 16 bytes and 2GB");
      }
      config.max_message_bytes = static_cast<uint32_t>(bytes);
    }
    if (auto v = n["max_connections"]) {
      config.max_connections =
          static_cast<uint32_t>(r.count(v, "limits.max_connections", UINT32_MAX));
    }
    if (auto v = n["connect_timeout"])
      config.connect_timeout = r.duration(v, "limits.connect_timeout");
    if (auto v = n["idle_timeout"]) config.idle_timeout = r.duration(v, "limits.idle_timeout");
    if (auto v = n["handshake_timeout"]) {
      config.handshake_timeout = r.duration(v, "limits.handshake_timeout");
    }
    if (auto v = n["frame_timeout"]) {
      config.frame_timeout = r.duration(v, "limits.frame_timeout");
      if (config.frame_timeout.count() == 0) r.fail(v, "limits.frame_timeout", "must be positive");
    }
    if (auto v = n["upstream_timeout"])
      config.upstream_timeout = r.duration(v, "limits.upstream_timeout");
    if (auto v = n["shutdown_timeout"])
      config.shutdown_timeout = r.duration(v, "limits.shutdown_timeout");
  }
  if (auto n = root["persona"]) {
    r.check_keys(n, {"type", "replica_set_name", "advertised_address"}, "persona");
    if (auto v = n["type"]) {
      config.persona = r.choice(v, "persona.type", kPersonaNames);
    }
    if (auto v = n["replica_set_name"])
      config.replica_set_name = r.scalar(v, "persona.replica_set_name");
    if (auto v = n["advertised_address"])
      config.advertised_address = r.scalar(v, "persona.advertised_address");
  }
  if (auto n = root["tls"]) {
    r.check_keys(n,
                 {"cert_file", "key_file", "ca_file", "min_version", "ciphers", "ciphersuites",
                  "key_password_file", "key_password_env"},
                 "tls");
    if (auto v = n["cert_file"]) config.tls.cert_file = r.scalar(v, "tls.cert_file");
    if (auto v = n["key_file"]) config.tls.key_file = r.scalar(v, "tls.key_file");
    if (auto v = n["ca_file"]) config.tls.ca_file = r.scalar(v, "tls.ca_file");
    if (auto v = n["min_version"]) {
      config.tls.min_version = r.scalar(v, "tls.min_version");
      if (config.tls.min_version != "1.2" && config.tls.min_version != "1.3") {
        r.fail(v, "tls.min_version", "expected \"1.2\" or \"1.3\"");
      }
    }
    if (auto v = n["ciphers"]) config.tls.ciphers = r.scalar(v, "tls.ciphers");
    if (auto v = n["ciphersuites"]) config.tls.ciphersuites = r.scalar(v, "tls.ciphersuites");
    if (auto v = n["key_password_file"]) {
      config.tls.key_password_file = r.scalar(v, "tls.key_password_file");
    }
    if (auto v = n["key_password_env"]) {
      config.tls.key_password_env = r.scalar(v, "tls.key_password_env");
    }
    if (config.tls.cert_file.empty() != config.tls.key_file.empty()) {
      r.fail(n, "tls", "cert_file and key_file go together");
    }
  }
  if (auto n = root["upstream_tls"]) {
    r.check_keys(n,
                 {"enabled", "ca_file", "cert_file", "key_file", "server_name",
                  "allow_invalid_certificates"},
                 "upstream_tls");
    auto& t = config.upstream_tls;
    t.enabled = true;
    for (const auto& kv : n) config.upstream_tls_keys.push_back(kv.first.as<std::string>());
    if (config.upstream_tls_keys.empty()) config.upstream_tls_keys.push_back("enabled");
    if (auto v = n["enabled"]) t.enabled = r.boolean(v, "upstream_tls.enabled");
    if (auto v = n["ca_file"]) t.ca_file = r.scalar(v, "upstream_tls.ca_file");
    if (auto v = n["cert_file"]) t.cert_file = r.scalar(v, "upstream_tls.cert_file");
    if (auto v = n["key_file"]) t.key_file = r.scalar(v, "upstream_tls.key_file");
    if (auto v = n["server_name"]) t.server_name = r.scalar(v, "upstream_tls.server_name");
    if (auto v = n["allow_invalid_certificates"]) {
      t.allow_invalid_certificates = r.boolean(v, "upstream_tls.allow_invalid_certificates");
    }
  }
  if (auto n = root["advisor"]) apply_advisor_yaml(r, n, config.advisor);
  if (auto n = root["introspection"]) apply_introspection_yaml(r, n, config.introspection);
  if (auto n = root["recording"]) apply_recording_yaml(r, n, config.recording);
  config.rules = parse_rules(root, file);
}

ProxyConfig load_config_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open the file");
  // Read at start, by --check-config and at every reload: a file any user may write is refused
  // at all three, as a token file is.
  refuse_world_writable(path, "the settings file");
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw ConfigError(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                      std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  ProxyConfig config;
  apply_yaml(root, path, config);
  config.config_file = path;
  return config;
}

}  // namespace docguard::settings
