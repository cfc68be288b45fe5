// The proxy's settings as plain structs: where clients connect, the upstream, TLS, limits, logs,
// and the other layers' settings the file holds (rules, advisor, introspection). The settings
// reader fills them from the YAML file, then the command-line flags (settings_reader.h); nothing
// here knows YAML.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "docguard/advisor/settings.h"
#include "docguard/base/enum_names.h"
#include "docguard/cluster/upstream_uri.h"
#include "docguard/conversation/handshake.h"
#include "docguard/introspection/introspection_settings.h"
#include "docguard/rules/rule_set.h"
#include "docguard/settings/config_error.h"
#include "docguard/settings/recording_settings.h"

namespace docguard::settings {

struct HostPort {
  std::string host;
  uint16_t port = 0;
  std::string to_string() const;
};

// "HOST:PORT", "[v6]:PORT" or ":PORT" (all interfaces); throws ConfigError.
HostPort parse_host_port(const std::string& text, const std::string& what);

// A Unix domain socket clients connect to: docguard as a sidecar, next to its application on
// one host or in one pod. Only processes that may write the socket file can connect, so its
// mode, owner and group are the access control.
struct UnixSocketSettings {
  std::string path;  // absolute, ending in ".sock": how drivers tell a socket from a host name
  uint32_t mode = 0660;
  std::optional<uint32_t> uid;  // `owner`, resolved when the file is read; unset: unchanged
  std::optional<uint32_t> gid;  // `group`
  std::string to_string() const { return "unix:" + path; }
};
// Any connection string a driver accepts (several hosts, replicaSet=, mongodb+srv://, TLS
// options), checked by cluster::parse_upstream_uri; throws ConfigError naming the option.
cluster::UpstreamUri check_upstream_uri(const std::string& uri);
// The first seed of check_upstream_uri(uri) (the SRV name, port 27017, for mongodb+srv://).
HostPort parse_upstream_uri(const std::string& uri);

using conversation::Persona;

// TLS towards clients: docguard presents cert_file/key_file; with ca_file, clients must present
// a certificate signed by it.
struct ClientTlsSettings {
  std::string cert_file;
  std::string key_file;
  std::string ca_file;
  // The oldest protocol version accepted: "1.2" or "1.3".
  std::string min_version = "1.2";
  // TLS 1.2's suites (OpenSSL's cipher-list syntax): forward secrecy (ECDHE) and AEAD only, so
  // static-RSA key exchange and CBC with SHA-1 are refused.
  std::string ciphers = "ECDHE+AESGCM:ECDHE+CHACHA20";
  // TLS 1.3's suites (OpenSSL's ciphersuites syntax); empty: OpenSSL's default, all of which are
  // forward secret.
  std::string ciphersuites;
  // The passphrase of an encrypted key_file: read from this file (its first line), or from this
  // environment variable; never asked for at a prompt.
  std::string key_password_file;
  std::string key_password_env;
  bool enabled() const { return !cert_file.empty(); }
};

// TLS towards the upstream: the server certificate is verified against ca_file (or the
// system store) and its name against server_name (default: the upstream host).
struct UpstreamTlsSettings {
  bool enabled = false;
  std::string ca_file;
  std::string cert_file;    // optional client certificate (x.509 auth passes through docguard
  std::string key_file;     // only with mutual TLS configured here)
  std::string server_name;  // default: the host of each server docguard connects to
  bool allow_invalid_certificates = false;  // tests only: skips verification
  bool allow_invalid_hostnames = false;     // the certificate's name is not checked
};
// upstream_auth: how docguard knows whether the upstream answers commands on a connection that
// has not authenticated. While it does not, docguard judges a connection's commands only once the
// server confirmed its authentication (conversation.h).
//   auto      required when the URI carries credentials (a user or authMechanism); otherwise
//             docguard asks the upstream itself, unauthenticated, at startup and whenever the
//             topology changes; until it has an answer, required.
//   required  always; none: never (every command judged as it arrives).
enum class UpstreamAuth { kAuto, kRequired, kNone };
inline constexpr auto kUpstreamAuthNames =
    base::enum_names<UpstreamAuth>({{UpstreamAuth::kAuto, "auto"},
                                    {UpstreamAuth::kRequired, "required"},
                                    {UpstreamAuth::kNone, "none"}},
                                   "auto");

enum class LogFormat { kText, kJson };
// The names `log_format:` and --log-format accept.
inline constexpr auto kLogFormatNames =
    base::enum_names<LogFormat>({{LogFormat::kText, "text"}, {LogFormat::kJson, "json"}}, "text");

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kCritical, kOff };
// The names `log_level:` and --log-level accept (one table, so the file's key is checked exactly
// as the flag is: an unknown name is an error, never a silenced log).
inline constexpr auto kLogLevelNames =
    base::enum_names<LogLevel>({{LogLevel::kTrace, "trace"},
                                {LogLevel::kDebug, "debug"},
                                {LogLevel::kInfo, "info"},
                                {LogLevel::kWarn, "warn"},
                                {LogLevel::kError, "error"},
                                {LogLevel::kCritical, "critical"},
                                {LogLevel::kOff, "off"}},
                               "info");

struct ProxyConfig {
  // Where clients connect (`listen:`, --listen): TCP addresses and Unix domain sockets, any
  // mix, at least one.
  std::vector<HostPort> listen{{"127.0.0.1", 27018}};
  std::vector<UnixSocketSettings> listen_unix;
  // The cluster (`upstream:`, --upstream), as given and as parsed: held once; its first seed is
  // upstream_first_seed().
  cluster::UpstreamUri upstream = check_upstream_uri("mongodb://127.0.0.1:27017");
  HostPort admin{"127.0.0.1", 9216};
  // When set, every admin request but the probes' (/healthz, /readyz) needs
  // "Authorization: Bearer <token>". From `admin.token`, `admin.token_file`, or the environment
  // (DOCGUARD_ADMIN_TOKEN_FILE, DOCGUARD_ADMIN_TOKEN): settle_admin_access() resolves it.
  std::string admin_token;
  std::string admin_token_file;  // admin.token_file: read at start and at every reload
  // admin.allow_without_token: the operator accepts an admin listener off loopback that anyone
  // who reaches it may use; without it such a listener without a token is refused.
  bool admin_allow_without_token = false;
  // admin.allowed_hosts: host names (beside IP literals, `localhost` and the admin address's own
  // host) a request's Host header may carry; any other name is refused, so a web page whose
  // name was rebound to this host cannot talk to the admin API.
  std::vector<std::string> admin_allowed_hosts;
  unsigned threads = 0;  // 0: one per core
  LogFormat log_format = LogFormat::kText;
  LogLevel log_level = LogLevel::kInfo;
  // metrics.max_series: the budget of /metrics lines; label sets past it are counted under
  // "_other" (see the metrics documentation for the worst case of the defaults).
  size_t max_metric_series = 8'500;
  // workload.max_shapes: query shapes the workload ledger keeps (per io thread, and in /report);
  // the rest are counted as overflow; 0 turns the ledger off.
  size_t max_workload_shapes = 500;
  UpstreamAuth upstream_auth = UpstreamAuth::kAuto;  // `upstream_auth:`
  // errors.reveal_rule_source: refusals name the rule's match glob, config line and id.
  bool reveal_rule_source = false;

  // Limits. Each has a safe default and is configurable under `limits:`.
  uint32_t max_message_bytes = codec::kDefaultMaxMessageBytes;
  uint32_t max_connections = 20'000;
  std::chrono::milliseconds connect_timeout{5'000};
  std::chrono::milliseconds idle_timeout{0};  // 0: none (drivers keep pooled connections idle)
  // A new connection must complete its first message (a TLS one its handshake too) within this,
  // or it is closed; it gets no upstream connection before it has sent something. 0: none.
  std::chrono::milliseconds handshake_timeout{10'000};
  // Once a message's first byte has arrived, all of it must arrive within this (slowloris).
  std::chrono::milliseconds frame_timeout{30'000};
  // With requests in flight, the upstream must send something within this; 0: none, since
  // legitimate queries can run long.
  std::chrono::milliseconds upstream_timeout{0};
  std::chrono::milliseconds shutdown_timeout{10'000};

  // Handshake persona presented to drivers.
  // replica_set: what applications see stays closest to the upstream (no `msg: isdbgrid`).
  Persona persona = Persona::kReplicaSet;
  std::string replica_set_name = "docguard";
  // host:port drivers should use; default: the first TCP listen address. Clients of a Unix
  // socket are always told its path.
  std::string advertised_address;

  ClientTlsSettings tls;
  // The `upstream_tls` block as written, and which of its keys were given: they win over the
  // URI's TLS options key by key (effective_upstream_tls).
  UpstreamTlsSettings upstream_tls;
  std::vector<std::string> upstream_tls_keys;

  advisor::AdvisorSettings advisor;  // the design advisor's thresholds (`advisor:`)
  introspection::IntrospectionSettings
      introspection;            // docguard's own reads of the cluster (`introspection:`)
  RecordingSettings recording;  // the traffic recorder (`recording:`), startable live too

  std::string config_file;  // where the rules came from, for SIGHUP reloads
  std::shared_ptr<const rules::RuleSet> rules;
};

// Sets the upstream from a connection string; throws ConfigError.
void set_upstream(ProxyConfig& config, const std::string& uri);
// The upstream's first seed (the SRV name, port 27017, for mongodb+srv://).
HostPort upstream_first_seed(const ProxyConfig& config);

// docguard's own TLS settings towards the upstream servers: the URI's options (tls, tlsCAFile,
// tlsCertificateKeyFile, tlsAllowInvalidCertificates, tlsAllowInvalidHostnames, tlsInsecure),
// overridden key by key by the keys the `upstream_tls` block gives; the block alone (without
// `enabled: false`) turns TLS on.
UpstreamTlsSettings effective_upstream_tls(const ProxyConfig& config);
// The upstream URI for docguard's own libmongoc clients (the topology monitor, introspection):
// when `upstream_tls` turns TLS on and the URI names no tls or ssl option, the effective
// settings written in as the URI options libmongoc reads, so heartbeats reach servers that
// require TLS. libmongoc has no server-name override: `server_name` applies to the data path.
std::string libmongoc_upstream_uri(const ProxyConfig& config);

// One listen address as written in `listen:` or --listen: "HOST:PORT" or "unix:PATH" (mode
// 0660, owner and group unchanged); appended to `config`. Throws ConfigError naming `what`.
void add_listen_address(ProxyConfig& config, const std::string& text, const std::string& what);
// A Unix socket's settings checked: an absolute path ending in ".sock" that fits a socket
// address. Throws ConfigError naming `what`.
void check_unix_socket_path(const std::string& path, const std::string& what);
// "0660" or "660" (octal, at most 0777); throws ConfigError naming `what`.
uint32_t parse_socket_mode(const std::string& text, const std::string& what);
// A user or group by name or number, as this host knows it; throws ConfigError naming `what`.
uint32_t resolve_user(const std::string& name, const std::string& what);
uint32_t resolve_group(const std::string& name, const std::string& what);

// The environment variables the admin token may come from (a Kubernetes Secret as an env var or
// a mounted file, a compose secret), when the settings file names none.
inline constexpr const char* kAdminTokenEnv = "DOCGUARD_ADMIN_TOKEN";
inline constexpr const char* kAdminTokenFileEnv = "DOCGUARD_ADMIN_TOKEN_FILE";

// 127.0.0.0/8, ::1 (and its IPv4-mapped form), or `localhost`: only this host can connect.
bool is_loopback_host(const std::string& host);

// The admin token resolved (admin.token, else admin.token_file, else the environment's
// DOCGUARD_ADMIN_TOKEN_FILE, else DOCGUARD_ADMIN_TOKEN), then the listener's exposure checked:
// off loopback without a token is refused unless admin.allow_without_token says the operator
// accepts it. Throws ConfigError naming the settings (never quoting the token). The start and
// every reload call it, so a reload cannot open the admin API either.
void settle_admin_access(ProxyConfig& config);

// True when the admin listener answers other hosts with no token (the opt-in was given).
bool admin_open_without_token(const ProxyConfig& config);

// Throws ConfigError when `path` (followed through links, as a Kubernetes mount is) may be
// written by any user of the host: whoever can write docguard's settings or token controls it.
void refuse_world_writable(const std::string& path, const std::string& what);
}  // namespace docguard::settings
