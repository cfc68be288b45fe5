#include "docguard/proxy/config.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fstream>

#include "docguard/rules/rule_set.h"

namespace docguard::proxy {
namespace {

// A HOST:PORT scalar; errors carry the key's position like every other.
HostPort host_port(const rules::ConfigReader& r, const YAML::Node& node, const std::string& key) {
  try {
    return parse_host_port(r.scalar(node, key), key);
  } catch (const ConfigError& e) {
    r.fail(node, key, e.what());
  }
}

// The names `persona.type` accepts.
constexpr auto kPersonaNames = base::enum_names<Persona>(
    {{Persona::kMongos, "mongos"}, {Persona::kReplicaSet, "replica_set"}}, "replica_set");

// `advisor:` maps onto AdvisorSettings field by field, under the same names.
void apply_advisor_yaml(const rules::ConfigReader& r, const YAML::Node& n,
                        advisor::AdvisorSettings& a) {
  struct Count {
    const char* name;
    uint64_t* u64;
    uint32_t* u32;
  };
  const Count counts[] = {
      {"array_length_warn", &a.array_length_warn, nullptr},
      {"array_length_block", &a.array_length_block, nullptr},
      {"outlier_max_p99", &a.outlier_max_p99, nullptr},
      {"outlier_min_documents", &a.outlier_min_documents, nullptr},
      {"document_bytes_warn", &a.document_bytes_warn, nullptr},
      {"document_bytes_block", &a.document_bytes_block, nullptr},
      {"nesting_depth_warn", nullptr, &a.nesting_depth_warn},
      {"nesting_depth_block", nullptr, &a.nesting_depth_block},
      {"indexes_warn", nullptr, &a.indexes_warn},
      {"indexes_block", nullptr, &a.indexes_block},
      {"collections_warn", nullptr, &a.collections_warn},
      {"collections_cluster_warn", nullptr, &a.collections_cluster_warn},
      {"same_shape_min_collections", nullptr, &a.same_shape_min_collections},
      {"bucket_min_documents", &a.bucket_min_documents, nullptr},
      {"bucket_max_p90_bytes", &a.bucket_max_p90_bytes, nullptr},
      {"bucket_target_per_bucket", nullptr, &a.bucket_target_per_bucket},
      {"attribute_min_sparse_fields", nullptr, &a.attribute_min_sparse_fields},
      {"live_sample_every", nullptr, &a.live_sample_every},
      {"live_max_namespaces", nullptr, &a.live_max_namespaces},
      {"live_min_pushes", &a.live_min_pushes, nullptr},
      {"live_min_reads", &a.live_min_reads, nullptr},
      {"computed_min_runs", &a.computed_min_runs, nullptr},
      {"reference_filter_min", &a.reference_filter_min, nullptr},
      {"unindexed_query_min", &a.unindexed_query_min, nullptr},
      {"query_shapes_per_collection", nullptr, &a.query_shapes_per_collection},
      {"subset_min_document_bytes", &a.subset_min_document_bytes, nullptr},
      {"forecast_series_per_namespace", nullptr, &a.forecast_series_per_namespace},
      {"forecast_report_rows", nullptr, &a.forecast_report_rows},
  };
  struct Ratio {
    const char* name;
    double* value;
  };
  const Ratio ratios[] = {{"outlier_ratio", &a.outlier_ratio},
                          {"bucket_max_key_ratio", &a.bucket_max_key_ratio},
                          {"attribute_max_presence", &a.attribute_max_presence},
                          {"lookup_ratio_warn", &a.lookup_ratio_warn},
                          {"subset_max_projected_share", &a.subset_max_projected_share}};
  if (!n.IsMap()) r.fail(n, "advisor", "expected a mapping");
  for (const auto& kv : n) {
    const auto key = kv.first.as<std::string>();
    const std::string where = "advisor." + key;
    bool known = false;
    for (const Count& c : counts) {
      if (key != c.name) continue;
      known = true;
      const auto v = r.count(kv.second, where, c.u32 ? double{UINT32_MAX} : 1e15);
      if (c.u32) *c.u32 = static_cast<uint32_t>(v);
      if (c.u64) *c.u64 = static_cast<uint64_t>(v);
    }
    for (const Ratio& q : ratios) {
      if (key != q.name) continue;
      known = true;
      try {
        *q.value = std::stod(r.scalar(kv.second, where));
      } catch (const std::exception&) {
        r.fail(kv.second, where, "expected a number");
      }
    }
    if (key == "forecast_horizon") {
      known = true;
      // A duration; past a year a forecast says nothing (rates change long before).
      const double seconds = static_cast<double>(r.duration(kv.second, where).count()) / 1000;
      if (seconds < 1 || seconds > 366 * 86400.0) {
        r.fail(kv.second, where, "must be between 1s and 366d");
      }
      a.forecast_horizon = seconds;
    }
    if (key == "report_missing_validator") {
      known = true;
      a.report_missing_validator = r.boolean(kv.second, where);
    }
    if (!known) r.fail(kv.first, where, "unknown key");
  }
  if (a.live_sample_every == 0) r.fail(n, "advisor.live_sample_every", "must be at least 1");
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

cluster::UpstreamUri check_upstream_uri(const std::string& uri) {
  auto parsed = cluster::parse_upstream_uri(uri);
  if (!parsed) throw ConfigError("upstream: " + parsed.error().message);
  return std::move(parsed).value();
}

HostPort parse_upstream_uri(const std::string& uri) {
  const auto parsed = check_upstream_uri(uri);
  if (parsed.seeds.empty()) return HostPort{parsed.srv_hostname, 27017};
  return parse_host_port(parsed.seeds.front(), "upstream");
}

void set_upstream(ProxyConfig& config, const std::string& uri) {
  config.upstream_cluster = check_upstream_uri(uri);
  config.upstream = config.upstream_cluster.seeds.empty()
                        ? HostPort{config.upstream_cluster.srv_hostname, 27017}
                        : parse_host_port(config.upstream_cluster.seeds.front(), "upstream");
  config.upstream_uri = uri;
}

UpstreamTlsSettings effective_upstream_tls(const ProxyConfig& config) {
  const auto& from_uri = config.upstream_cluster.tls;
  UpstreamTlsSettings out;
  out.enabled = from_uri.enabled;
  out.ca_file = from_uri.ca_file;
  out.cert_file = out.key_file = from_uri.certificate_key_file;
  out.allow_invalid_certificates = from_uri.allow_invalid_certificates;
  out.allow_invalid_hostnames = from_uri.allow_invalid_hostnames;
  const auto& block = config.upstream_tls;
  const auto given = [&](std::string_view key) {
    return std::find(config.upstream_tls_keys.begin(), config.upstream_tls_keys.end(), key) !=
           config.upstream_tls_keys.end();
  };
  if (!config.upstream_tls_keys.empty()) out.enabled = true;  // the block means TLS
  if (given("enabled")) out.enabled = block.enabled;
  if (given("ca_file")) out.ca_file = block.ca_file;
  if (given("cert_file")) out.cert_file = block.cert_file;
  if (given("key_file")) out.key_file = block.key_file;
  if (given("cert_file") && !given("key_file")) out.key_file = block.cert_file;
  if (given("server_name")) out.server_name = block.server_name;
  if (given("allow_invalid_certificates")) {
    out.allow_invalid_certificates = block.allow_invalid_certificates;
  }
  return out;
}

namespace {

std::string with_uri_option(std::string uri, const std::string& option) {
  const size_t slash = uri.find('/', uri.find("://") + 3);
  if (slash == std::string::npos) uri += "/";
  uri += uri.find('?') == std::string::npos ? "?" : "&";
  return uri + option;
}

}  // namespace

std::string libmongoc_upstream_uri(const ProxyConfig& config) {
  std::string uri = config.upstream_uri;
  const UpstreamTlsSettings tls = effective_upstream_tls(config);
  if (!tls.enabled || uri.find("tls=") != std::string::npos ||
      uri.find("ssl=") != std::string::npos) {
    return uri;
  }
  uri = with_uri_option(uri, "tls=true");
  if (!tls.ca_file.empty()) uri = with_uri_option(uri, "tlsCAFile=" + tls.ca_file);
  // libmongoc takes the certificate and its key from one file.
  if (!tls.cert_file.empty() && (tls.key_file.empty() || tls.key_file == tls.cert_file)) {
    uri = with_uri_option(uri, "tlsCertificateKeyFile=" + tls.cert_file);
  }
  if (tls.allow_invalid_certificates)
    uri = with_uri_option(uri, "tlsAllowInvalidCertificates=true");
  if (tls.allow_invalid_hostnames) uri = with_uri_option(uri, "tlsAllowInvalidHostnames=true");
  return uri;
}

void apply_yaml(const YAML::Node& root, const std::string& file, ProxyConfig& config) {
  if (!root || root.IsNull()) {
    // An empty (or comment-only) file: every default, including the default rules.
    config.rules = rules::parse_rules(YAML::Node(), file);
    return;
  }
  const rules::ConfigReader r(file);
  if (!root.IsMap()) r.fail(root, "(top level)", "expected a mapping");
  for (const auto& kv : root) {
    const auto key = kv.first.as<std::string>();
    static constexpr std::string_view kProxyKeys[] = {
        "listen",  "upstream", "admin",        "threads", "log_format",    "log_level", "limits",
        "persona", "tls",      "upstream_tls", "advisor", "introspection", "metrics",   "workload"};
    if (std::find(std::begin(kProxyKeys), std::end(kProxyKeys), key) == std::end(kProxyKeys) &&
        std::find(rules::kTopLevelKeys.begin(), rules::kTopLevelKeys.end(), key) ==
            rules::kTopLevelKeys.end()) {
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
  if (auto n = root["admin"]) {
    if (n.IsMap()) {
      r.check_keys(n, {"listen", "token"}, "admin");
      if (auto l = n["listen"]) config.admin = host_port(r, l, "admin.listen");
      if (auto t = n["token"]) config.admin_token = r.scalar(t, "admin.token");
    } else {
      config.admin = host_port(r, n, "admin");
    }
  }
  if (auto n = root["threads"]) config.threads = static_cast<unsigned>(r.count(n, "threads", 256));
  if (auto n = root["log_format"]) {
    config.log_format = r.choice(n, "log_format", kLogFormatNames);
  }
  if (auto n = root["log_level"]) config.log_level = r.choice(n, "log_level", kLogLevelNames);
  if (auto n = root["metrics"]) {
    r.check_keys(n, {"max_series"}, "metrics");
    if (auto v = n["max_series"]) {
      config.max_metric_series = static_cast<size_t>(r.count(v, "metrics.max_series", 10'000'000));
      if (config.max_metric_series < 1'000) {
        r.fail(v, "metrics.max_series", "expected at least 1000 (docguard's own series)");
      }
    }
  }
  if (auto n = root["workload"]) {
    r.check_keys(n, {"max_shapes"}, "workload");
    if (auto v = n["max_shapes"]) {
      config.max_workload_shapes = static_cast<size_t>(r.count(v, "workload.max_shapes", 100'000));
    }
  }
  if (auto n = root["limits"]) {
    r.check_keys(n,
                 {"max_message_bytes", "max_connections", "connect_timeout", "idle_timeout",
                  "frame_timeout", "upstream_timeout", "shutdown_timeout"},
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
    r.check_keys(n, {"cert_file", "key_file", "ca_file"}, "tls");
    if (auto v = n["cert_file"]) config.tls.cert_file = r.scalar(v, "tls.cert_file");
    if (auto v = n["key_file"]) config.tls.key_file = r.scalar(v, "tls.key_file");
    if (auto v = n["ca_file"]) config.tls.ca_file = r.scalar(v, "tls.ca_file");
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
  config.rules = rules::parse_rules(root, file);
}

ProxyConfig load_config_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open the file");
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

}  // namespace docguard::proxy
