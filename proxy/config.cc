#include "docguard/proxy/config.h"

#include <charconv>
#include <fstream>
#include <set>

#include "docguard/rules/rule_set.h"

namespace docguard::proxy {
namespace {

std::string where(const std::string& file, const YAML::Node& node, const std::string& key) {
  const auto mark = node.Mark();
  std::string out = file;
  if (!mark.is_null()) out += ":" + std::to_string(mark.line + 1);
  return out + ": key '" + key + "'";
}

template <typename T>
T scalar(const YAML::Node& node, const std::string& file, const std::string& key) {
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    throw ConfigError(where(file, node, key) + ": expected a " +
                      (std::is_same_v<T, std::string> ? "string" : "number"));
  }
}

void check_keys(const YAML::Node& map, const std::set<std::string>& known, const std::string& file,
                const std::string& prefix) {
  if (!map.IsMap()) throw ConfigError(where(file, map, prefix) + ": expected a mapping");
  for (const auto& kv : map) {
    const auto key = kv.first.as<std::string>();
    if (!known.contains(key)) {
      throw ConfigError(where(file, kv.first, prefix.empty() ? key : prefix + "." + key) +
                        ": unknown key");
    }
  }
}

uint32_t byte_limit(const YAML::Node& node, const std::string& file, const std::string& key) {
  const auto text = scalar<std::string>(node, file, key);
  const auto value = rules::parse_byte_size(text);
  if (!value || *value < 16 || *value > 2'000'000'000.0) {
    throw ConfigError(where(file, node, key) + ": expected a size such as 48000000 or 16MiB");
  }
  return static_cast<uint32_t>(*value);
}

std::chrono::milliseconds duration(const YAML::Node& node, const std::string& file,
                                   const std::string& key) {
  try {
    return parse_duration(scalar<std::string>(node, file, key));
  } catch (const ConfigError& e) {
    throw ConfigError(where(file, node, key) + ": " + e.what());
  }
}

}  // namespace

std::string HostPort::to_string() const {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

HostPort parse_host_port(const std::string& text, const std::string& what) {
  HostPort hp;
  std::string port_text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      throw ConfigError(what + ": expected [IPv6]:PORT, got '" + text + "'");
    }
    hp.host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos)
      throw ConfigError(what + ": expected HOST:PORT, got '" + text + "'");
    hp.host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  if (hp.host.empty()) hp.host = "0.0.0.0";
  unsigned port = 0;
  auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port > 65535) {
    throw ConfigError(what + ": bad port in '" + text + "'");
  }
  hp.port = static_cast<uint16_t>(port);
  return hp;
}

HostPort parse_upstream_uri(const std::string& uri) {
  constexpr std::string_view kScheme = "mongodb://";
  if (uri.rfind(kScheme, 0) != 0) {
    throw ConfigError("upstream: expected mongodb://HOST:PORT, got '" + uri + "'");
  }
  std::string rest = uri.substr(kScheme.size());
  if (const auto at = rest.find('@'); at != std::string::npos) rest = rest.substr(at + 1);
  rest = rest.substr(0, rest.find_first_of("/?"));
  if (rest.find(',') != std::string::npos) {
    throw ConfigError("upstream: docguard connects to one mongod/mongos; got several hosts in '" +
                      uri + "'");
  }
  if (rest.empty()) throw ConfigError("upstream: no host in '" + uri + "'");
  const bool has_port = rest.front() == '[' ? rest.find("]:") != std::string::npos
                                            : rest.find(':') != std::string::npos;
  return parse_host_port(has_port ? rest : rest + ":27017", "upstream");
}

void apply_uri_tls_options(const std::string& uri, UpstreamTlsSettings& tls) {
  const auto q = uri.find('?');
  if (q == std::string::npos) return;
  std::string query = uri.substr(q + 1);
  size_t pos = 0;
  while (pos <= query.size()) {
    const size_t amp = std::min(query.find('&', pos), query.size());
    const std::string pair = query.substr(pos, amp - pos);
    pos = amp + 1;
    const auto eq = pair.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = pair.substr(0, eq), value = pair.substr(eq + 1);
    const bool yes = value == "true";
    if (key == "tls" || key == "ssl") {
      tls.enabled = yes;
    } else if (key == "tlsCAFile") {
      tls.ca_file = value;
      tls.enabled = true;
    } else if (key == "tlsCertificateKeyFile") {
      tls.cert_file = tls.key_file = value;
    } else if (key == "tlsAllowInvalidCertificates" || key == "tlsInsecure") {
      tls.allow_invalid_certificates = yes;
    }
  }
}

std::chrono::milliseconds parse_duration(const std::string& text) {
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || value < 0) throw ConfigError("expected a duration such as 500ms or 10s");
  const std::string unit(ptr, text.data() + text.size());
  double ms = 0;
  if (unit.empty() || unit == "ms") {
    ms = value;
  } else if (unit == "s") {
    ms = value * 1000;
  } else if (unit == "m") {
    ms = value * 60'000;
  } else {
    throw ConfigError("unknown duration unit '" + unit + "' (use ms, s or m)");
  }
  return std::chrono::milliseconds(static_cast<int64_t>(ms));
}

void apply_yaml(const YAML::Node& root, const std::string& file, ProxyConfig& config) {
  if (!root || root.IsNull()) {
    // An empty (or comment-only) file: every default, including the default rules.
    config.rules = rules::parse_rules(YAML::Node(), file);
    return;
  }
  std::set<std::string> known = {"listen",    "upstream", "admin",   "threads", "log_format",
                                 "log_level", "limits",   "persona", "tls",     "upstream_tls"};
  for (auto k : rules::kTopLevelKeys) known.emplace(k);
  check_keys(root, known, file, "");

  if (auto n = root["listen"])
    config.listen =
        parse_host_port(scalar<std::string>(n, file, "listen"), where(file, n, "listen"));
  if (auto n = root["upstream"]) {
    config.upstream_uri = scalar<std::string>(n, file, "upstream");
    try {
      config.upstream = parse_upstream_uri(config.upstream_uri);
      apply_uri_tls_options(config.upstream_uri, config.upstream_tls);
    } catch (const ConfigError& e) {
      throw ConfigError(where(file, n, "upstream") + ": " + e.what());
    }
  }
  if (auto n = root["admin"]) {
    if (n.IsMap()) {
      check_keys(n, {"listen", "token"}, file, "admin");
      if (auto l = n["listen"])
        config.admin = parse_host_port(scalar<std::string>(l, file, "admin.listen"),
                                       where(file, l, "admin.listen"));
      if (auto t = n["token"]) config.admin_token = scalar<std::string>(t, file, "admin.token");
    } else {
      config.admin =
          parse_host_port(scalar<std::string>(n, file, "admin"), where(file, n, "admin"));
    }
  }
  if (auto n = root["threads"]) {
    const auto t = scalar<int>(n, file, "threads");
    if (t < 0 || t > 256) throw ConfigError(where(file, n, "threads") + ": expected 0..256");
    config.threads = static_cast<unsigned>(t);
  }
  if (auto n = root["log_format"]) {
    const auto f = scalar<std::string>(n, file, "log_format");
    if (f == "text")
      config.log_format = LogFormat::kText;
    else if (f == "json")
      config.log_format = LogFormat::kJson;
    else
      throw ConfigError(where(file, n, "log_format") + ": expected text or json");
  }
  if (auto n = root["log_level"]) config.log_level = scalar<std::string>(n, file, "log_level");
  if (auto n = root["limits"]) {
    check_keys(n,
               {"max_message_bytes", "max_connections", "connect_timeout", "idle_timeout",
                "frame_timeout", "upstream_timeout", "shutdown_timeout"},
               file, "limits");
    if (auto v = n["max_message_bytes"])
      config.max_message_bytes = byte_limit(v, file, "limits.max_message_bytes");
    if (auto v = n["max_connections"])
      config.max_connections = scalar<uint32_t>(v, file, "limits.max_connections");
    if (auto v = n["connect_timeout"])
      config.connect_timeout = duration(v, file, "limits.connect_timeout");
    if (auto v = n["idle_timeout"]) config.idle_timeout = duration(v, file, "limits.idle_timeout");
    if (auto v = n["frame_timeout"])
      config.frame_timeout = duration(v, file, "limits.frame_timeout");
    if (auto v = n["upstream_timeout"])
      config.upstream_timeout = duration(v, file, "limits.upstream_timeout");
    if (config.frame_timeout.count() == 0) {
      throw ConfigError(where(file, n["frame_timeout"], "limits.frame_timeout") +
                        ": must be positive");
    }
    if (auto v = n["shutdown_timeout"])
      config.shutdown_timeout = duration(v, file, "limits.shutdown_timeout");
  }
  if (auto n = root["persona"]) {
    check_keys(n, {"type", "replica_set_name", "advertised_address"}, file, "persona");
    if (auto v = n["type"]) {
      const auto t = scalar<std::string>(v, file, "persona.type");
      if (t == "mongos")
        config.persona = Persona::kMongos;
      else if (t == "replica_set")
        config.persona = Persona::kReplicaSet;
      else
        throw ConfigError(where(file, v, "persona.type") + ": expected mongos or replica_set");
    }
    if (auto v = n["replica_set_name"])
      config.replica_set_name = scalar<std::string>(v, file, "persona.replica_set_name");
    if (auto v = n["advertised_address"])
      config.advertised_address = scalar<std::string>(v, file, "persona.advertised_address");
  }
  if (auto n = root["tls"]) {
    check_keys(n, {"cert_file", "key_file", "ca_file"}, file, "tls");
    if (auto v = n["cert_file"])
      config.tls.cert_file = scalar<std::string>(v, file, "tls.cert_file");
    if (auto v = n["key_file"]) config.tls.key_file = scalar<std::string>(v, file, "tls.key_file");
    if (auto v = n["ca_file"]) config.tls.ca_file = scalar<std::string>(v, file, "tls.ca_file");
    if (config.tls.cert_file.empty() != config.tls.key_file.empty()) {
      throw ConfigError(where(file, n, "tls") + ": cert_file and key_file go together");
    }
  }
  if (auto n = root["upstream_tls"]) {
    check_keys(n,
               {"enabled", "ca_file", "cert_file", "key_file", "server_name",
                "allow_invalid_certificates"},
               file, "upstream_tls");
    auto& t = config.upstream_tls;
    t.enabled = true;
    if (auto v = n["enabled"]) t.enabled = scalar<bool>(v, file, "upstream_tls.enabled");
    if (auto v = n["ca_file"]) t.ca_file = scalar<std::string>(v, file, "upstream_tls.ca_file");
    if (auto v = n["cert_file"])
      t.cert_file = scalar<std::string>(v, file, "upstream_tls.cert_file");
    if (auto v = n["key_file"]) t.key_file = scalar<std::string>(v, file, "upstream_tls.key_file");
    if (auto v = n["server_name"])
      t.server_name = scalar<std::string>(v, file, "upstream_tls.server_name");
    if (auto v = n["allow_invalid_certificates"]) {
      t.allow_invalid_certificates =
          scalar<bool>(v, file, "upstream_tls.allow_invalid_certificates");
    }
  }
  config.rules = rules::parse_rules(root, file);
}

ProxyConfig load_config_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open the file");
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw ConfigError(path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  ProxyConfig config;
  try {
    apply_yaml(root, path, config);
  } catch (const rules::ConfigError& e) {
    throw ConfigError(e.what());
  }
  config.config_file = path;
  return config;
}

}  // namespace docguard::proxy
