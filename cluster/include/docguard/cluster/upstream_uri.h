// Validation of the upstream connection string (`--upstream` / `upstream:`).
//
// libmongoc parses it (mongoc_uri_new_with_error), so anything a driver accepts is accepted, and
// docguard then refuses what it cannot serve, naming the option. No network access: a
// mongodb+srv:// string is resolved only when a TopologyMonitor starts.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/cluster/expected.h"

namespace docguard::cluster {

// What docguard's own TLS connections to the upstream servers must use (the monitor's libmongoc
// connections get the same settings from the URI).
struct TlsSettings {
  bool enabled = false;                       // tls=true / ssl=true, or implied by mongodb+srv://
  std::string ca_file;                        // tlsCAFile (empty: system store)
  std::string certificate_key_file;           // tlsCertificateKeyFile (client certificate)
  std::string certificate_key_file_password;  // tlsCertificateKeyFilePassword
  bool allow_invalid_hostnames = false;       // tlsAllowInvalidHostnames or tlsInsecure
  bool allow_invalid_certificates = false;    // tlsAllowInvalidCertificates or tlsInsecure
};

struct UpstreamUri {
  std::string uri;       // as given; may contain a password: log `redacted` instead
  std::string redacted;  // the same string with the password replaced by "****"

  // host:port of each seed ("[::1]:27017" for IPv6). Empty for mongodb+srv:// until resolved.
  std::vector<std::string> seeds;
  bool is_srv = false;
  std::string srv_hostname;      // mongodb+srv://<this>
  std::string srv_service_name;  // srvServiceName, default "mongodb"

  std::string replica_set;  // replicaSet= (empty: none given; discovery decides)
  // directConnection=true: talk to the one seed whatever it is (Single topology).
  bool direct_connection = false;

  TlsSettings tls;

  // Driver defaults when absent: 30 s selection, 10 s heartbeat (pooled mode), 15 ms window,
  // 10 s connect.
  std::chrono::milliseconds server_selection_timeout{30000};
  std::chrono::milliseconds heartbeat_frequency{10000};
  std::chrono::milliseconds local_threshold{15};
  std::chrono::milliseconds connect_timeout{10000};

  // User name (and perhaps password or mechanism) present. docguard's monitoring never
  // authenticates (heartbeats need no auth); client connections authenticate themselves.
  bool has_credentials = false;
  std::string auth_mechanism;  // authMechanism as given (empty: negotiated)

  // Options accepted but without effect through docguard (the application's own driver sets
  // them on its connection to docguard), lower-cased, for a warning at startup.
  std::vector<std::string> ignored_options;
};

// Parses and checks `uri`. Errors name the option (Error::subject) when one is at fault.
Expected<UpstreamUri> parse_upstream_uri(std::string_view uri);

// The URI with any password replaced by "****"; safe to log even for an invalid URI.
std::string redact_uri(std::string_view uri);
// The URI without its user and password ("mongodb://u:p@h/db" -> "mongodb://h/db"): what a
// report names as its source.
std::string strip_credentials(std::string_view uri);

// Calls mongoc_init() once per process (never mongoc_cleanup: other users may remain), and
// removes the name of libmongoc's shared-memory counters so a killed process leaves nothing.
void ensure_mongoc_initialized();

}  // namespace docguard::cluster
