// The proxy's settings: from the YAML file, then overridden by command-line flags.
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "docguard/advisor/settings.h"
#include "docguard/conversation/handshake.h"
#include "docguard/rules/config_reader.h"
#include "docguard/rules/rule_set.h"

namespace docguard::proxy {

struct HostPort {
  std::string host;
  uint16_t port = 0;
  std::string to_string() const;
};

// "HOST:PORT", "[v6]:PORT" or ":PORT" (all interfaces); throws ConfigError.
HostPort parse_host_port(const std::string& text, const std::string& what);
// "mongodb://HOST[:PORT][/...][?...]" (one host; default port 27017); throws ConfigError.
HostPort parse_upstream_uri(const std::string& uri);

// One error type and format for the whole file (docguard/rules/config_reader.h).
using rules::ConfigError;

using conversation::Persona;

// TLS towards clients: docguard presents cert_file/key_file; with ca_file, clients must present
// a certificate signed by it.
struct ClientTlsSettings {
  std::string cert_file;
  std::string key_file;
  std::string ca_file;
  bool enabled() const { return !cert_file.empty(); }
};

// TLS towards the upstream: the server certificate is verified against ca_file (or the
// system store) and its name against server_name (default: the upstream host).
struct UpstreamTlsSettings {
  bool enabled = false;
  std::string ca_file;
  std::string cert_file;  // optional client certificate (x.509 auth passes through docguard
  std::string key_file;   // only with mutual TLS configured here)
  std::string server_name;
  bool allow_invalid_certificates = false;  // tests only: skips verification
};
enum class LogFormat { kText, kJson };

// Applies the URI's TLS options (tls/ssl=true, tlsCAFile, tlsCertificateKeyFile,
// tlsAllowInvalidCertificates) to `tls`.
void apply_uri_tls_options(const std::string& uri, UpstreamTlsSettings& tls);

struct ProxyConfig {
  HostPort listen{"127.0.0.1", 27018};
  HostPort upstream{"127.0.0.1", 27017};
  std::string upstream_uri = "mongodb://127.0.0.1:27017";
  HostPort admin{"127.0.0.1", 9216};
  std::string admin_token;  // when set, admin requests need "Authorization: Bearer <token>"
  unsigned threads = 0;     // 0: one per core
  LogFormat log_format = LogFormat::kText;
  std::string log_level = "info";

  // Limits. Each has a safe default and is configurable under `limits:`.
  uint32_t max_message_bytes = codec::kDefaultMaxMessageBytes;
  uint32_t max_connections = 20'000;
  std::chrono::milliseconds connect_timeout{5'000};
  std::chrono::milliseconds idle_timeout{0};  // 0: none (drivers keep pooled connections idle)
  // Once a message's first byte has arrived, all of it must arrive within this (slowloris).
  std::chrono::milliseconds frame_timeout{30'000};
  // With requests in flight, the upstream must send something within this; 0: none, since
  // legitimate queries can run long.
  std::chrono::milliseconds upstream_timeout{0};
  std::chrono::milliseconds shutdown_timeout{10'000};

  // Handshake persona presented to drivers.
  Persona persona = Persona::kMongos;
  std::string replica_set_name = "docguard";
  std::string advertised_address;  // host:port drivers should use; default: the listen address

  ClientTlsSettings tls;
  UpstreamTlsSettings upstream_tls;

  advisor::AdvisorSettings advisor;  // the design advisor's thresholds (`advisor:`)

  std::string config_file;  // where the rules came from, for SIGHUP reloads
  std::shared_ptr<const rules::RuleSet> rules;
};

// Reads a YAML file (proxy settings + rules). Errors name the file, line and key.
ProxyConfig load_config_file(const std::string& path);
// Applies the proxy keys of an already-parsed YAML document onto `config`.
void apply_yaml(const YAML::Node& root, const std::string& file_name, ProxyConfig& config);

}  // namespace docguard::proxy
