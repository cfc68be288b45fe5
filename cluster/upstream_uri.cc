#include "docguard/cluster/upstream_uri.h"

#include <mongoc/mongoc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace docguard::cluster {
namespace {

enum class Policy {
  kServed,   // docguard or its monitor uses it
  kIgnored,  // accepted, no effect through docguard: applications set it on their own driver
  kChecked,  // accepted only with certain values (see check_value)
};

struct OptionRule {
  std::string_view name;  // lower case, as libmongoc normalises keys
  Policy policy;
};

// Every option libmongoc 1.23 knows (mongoc-uri.h; slaveOk is defined there but 1.23 warns
// "Unsupported URI option" and drops it, so it counts as unknown). Anything else is refused
// although libmongoc would only warn and drop it: a misspelt replicaSet or tls would silently
// change which servers docguard talks to, or how.
constexpr std::array kOptions{
    OptionRule{"appname", Policy::kServed},
    OptionRule{"authmechanism", Policy::kServed},
    OptionRule{"authmechanismproperties", Policy::kServed},
    OptionRule{"authsource", Policy::kServed},
    OptionRule{"canonicalizehostname", Policy::kServed},
    OptionRule{"connecttimeoutms", Policy::kServed},
    OptionRule{"directconnection", Policy::kServed},
    OptionRule{"gssapiservicename", Policy::kServed},
    OptionRule{"heartbeatfrequencyms", Policy::kServed},
    OptionRule{"localthresholdms", Policy::kChecked},
    OptionRule{"replicaset", Policy::kServed},
    OptionRule{"serverselectiontimeoutms", Policy::kServed},
    OptionRule{"srvservicename", Policy::kServed},
    OptionRule{"srvmaxhosts", Policy::kServed},
    OptionRule{"tls", Policy::kServed},
    OptionRule{"ssl", Policy::kServed},
    OptionRule{"tlscafile", Policy::kServed},
    OptionRule{"sslcertificateauthorityfile", Policy::kServed},
    OptionRule{"tlscertificatekeyfile", Policy::kServed},
    OptionRule{"sslclientcertificatekeyfile", Policy::kServed},
    OptionRule{"tlscertificatekeyfilepassword", Policy::kServed},
    OptionRule{"sslclientcertificatekeypassword", Policy::kServed},
    OptionRule{"tlsallowinvalidcertificates", Policy::kServed},
    OptionRule{"sslallowinvalidcertificates", Policy::kServed},
    OptionRule{"tlsallowinvalidhostnames", Policy::kServed},
    OptionRule{"sslallowinvalidhostnames", Policy::kServed},
    OptionRule{"tlsinsecure", Policy::kServed},
    OptionRule{"tlsdisableocspendpointcheck", Policy::kServed},
    OptionRule{"tlsdisablecertificaterevocationcheck", Policy::kServed},
    // docguard sends every request to the writable server it pinned; it cannot honour a read
    // preference of its own, and a client's $readPreference passes through unchanged.
    OptionRule{"readpreference", Policy::kChecked},
    OptionRule{"readpreferencetags", Policy::kChecked},
    OptionRule{"maxstalenessseconds", Policy::kChecked},
    // A load balancer needs serviceId pinning and the loadBalanced handshake: not implemented.
    OptionRule{"loadbalanced", Policy::kChecked},
    // Per-operation settings and pool sizes: the application's driver applies them to its
    // connection to docguard; the monitor's pool never runs operations.
    OptionRule{"compressors", Policy::kIgnored},
    OptionRule{"zlibcompressionlevel", Policy::kIgnored},
    OptionRule{"journal", Policy::kIgnored},
    OptionRule{"w", Policy::kIgnored},
    OptionRule{"wtimeoutms", Policy::kIgnored},
    OptionRule{"safe", Policy::kIgnored},
    OptionRule{"readconcernlevel", Policy::kIgnored},
    OptionRule{"retryreads", Policy::kIgnored},
    OptionRule{"retrywrites", Policy::kIgnored},
    OptionRule{"maxpoolsize", Policy::kIgnored},
    OptionRule{"minpoolsize", Policy::kIgnored},
    OptionRule{"maxidletimems", Policy::kIgnored},
    OptionRule{"waitqueuemultiple", Policy::kIgnored},
    OptionRule{"waitqueuetimeoutms", Policy::kIgnored},
    OptionRule{"socketcheckintervalms", Policy::kIgnored},
    OptionRule{"sockettimeoutms", Policy::kIgnored},
    // Pooled (multi-threaded) mode never tries once; a single-threaded setting.
    OptionRule{"serverselectiontryonce", Policy::kIgnored},
};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

const OptionRule* find_rule(std::string_view lowered) {
  for (const auto& rule : kOptions) {
    if (rule.name == lowered) return &rule;
  }
  return nullptr;
}

// Option keys in the order written, as given (libmongoc only keeps the ones it knows).
std::vector<std::string> option_keys(std::string_view uri) {
  std::vector<std::string> keys;
  // The query starts after the authority; userinfo cannot hold a raw '?' (it must be
  // percent-encoded), so the first '?' after "://" starts it.
  const auto scheme = uri.find("://");
  const auto q = uri.find('?', scheme == std::string_view::npos ? 0 : scheme + 3);
  if (q == std::string_view::npos) return keys;
  std::string_view rest = uri.substr(q + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    if (!pair.empty()) keys.emplace_back(pair.substr(0, pair.find('=')));
    if (amp == std::string_view::npos) break;
    rest.remove_prefix(amp + 1);
  }
  return keys;
}

Error option_error(std::string option, const std::string& why) {
  std::string message = "upstream URI option " + option + ": " + why;
  return Error{ErrorKind::kConfiguration, ErrorSource::kConfiguration, std::move(message),
               std::move(option)};
}

Expected<void> check_value(const mongoc_uri_t* uri, std::string_view key,
                           const std::string& as_written) {
  if (key == "loadbalanced") {
    if (mongoc_uri_get_option_as_bool(uri, MONGOC_URI_LOADBALANCED, false)) {
      return option_error(as_written,
                          "docguard cannot front a load balancer (loadBalanced=true needs "
                          "serviceId pinning); give the mongos addresses instead");
    }
  } else if (key == "localthresholdms") {
    if (mongoc_uri_get_option_as_int32(uri, MONGOC_URI_LOCALTHRESHOLDMS, 15) < 0) {
      return option_error(as_written, "must not be negative");
    }
  } else if (key == "readpreference") {
    const mongoc_read_prefs_t* prefs = mongoc_uri_get_read_prefs_t(uri);
    if (mongoc_read_prefs_get_mode(prefs) != MONGOC_READ_PRIMARY) {
      return option_error(as_written,
                          "docguard sends all traffic to the writable server, so only "
                          "readPreference=primary can be honoured; applications set their own "
                          "read preference per operation");
    }
  } else if (key == "readpreferencetags" || key == "maxstalenessseconds") {
    return option_error(as_written, "read preference settings cannot be honoured by docguard");
  }
  return {};
}

std::string utf8_option(const mongoc_uri_t* uri, const char* name) {
  const char* v = mongoc_uri_get_option_as_utf8(uri, name, nullptr);
  return v ? v : "";
}

}  // namespace

void ensure_mongoc_initialized() {
  static std::once_flag once;
  std::call_once(once, [] {
    mongoc_init();
    // libmongoc (which initializes itself before main) keeps its counters in a shared-memory
    // file named after the pid, removed only by a clean exit. A killed docguard left it behind,
    // and a later process given the same pid could not create its own: libmongoc then printed a
    // warning of its own format on stderr. The mapping outlives the name; docguard has its own
    // metrics and nothing reads libmongoc's.
    const std::string name = "/mongoc-" + std::to_string(getpid());
    shm_unlink(name.c_str());
  });
}

namespace {

// Where a URI's user information sits: from `start` (after "://") to `at` (the '@' ending it),
// relative to `start`. Empty when the URI has none.
struct UserInfo {
  size_t start = 0;
  size_t at = std::string_view::npos;
};

UserInfo user_info_of(std::string_view uri) {
  const auto scheme = uri.find("://");
  if (scheme == std::string_view::npos) return {};
  const auto start = scheme + 3;
  const auto end = uri.find_first_of("/?", start);
  const auto authority = uri.substr(start, end == std::string_view::npos ? end : end - start);
  return UserInfo{start, authority.rfind('@')};
}

}  // namespace

std::string redact_uri(std::string_view uri) {
  const UserInfo info = user_info_of(uri);
  if (info.at == std::string_view::npos) return std::string(uri);
  const auto colon = uri.substr(info.start, info.at).find(':');
  if (colon == std::string_view::npos) return std::string(uri);
  std::string out(uri.substr(0, info.start + colon + 1));
  out += "****";
  out += uri.substr(info.start + info.at);
  return out;
}

std::string strip_credentials(std::string_view uri) {
  const UserInfo info = user_info_of(uri);
  if (info.at == std::string_view::npos) return std::string(uri);
  return std::string(uri.substr(0, info.start)) + std::string(uri.substr(info.start + info.at + 1));
}

Expected<UpstreamUri> parse_upstream_uri(std::string_view text) {
  ensure_mongoc_initialized();
  UpstreamUri out;
  out.uri = std::string(text);
  out.redacted = redact_uri(text);

  bson_error_t err{};
  std::unique_ptr<mongoc_uri_t, decltype(&mongoc_uri_destroy)> uri(
      mongoc_uri_new_with_error(out.uri.c_str(), &err), &mongoc_uri_destroy);
  if (!uri) {
    return Error{ErrorKind::kConfiguration, ErrorSource::kConfiguration,
                 std::string("invalid upstream URI: ") + err.message};
  }

  for (const auto& key : option_keys(text)) {
    const std::string lowered = lower(key);
    const OptionRule* rule = find_rule(lowered);
    if (!rule) {
      return option_error(key,
                          "unknown option (a driver would ignore it; docguard refuses it "
                          "in case it is a misspelling)");
    }
    if (rule->policy == Policy::kIgnored) {
      if (std::find(out.ignored_options.begin(), out.ignored_options.end(), lowered) ==
          out.ignored_options.end()) {
        out.ignored_options.push_back(lowered);
      }
    } else if (rule->policy == Policy::kChecked) {
      if (auto checked = check_value(uri.get(), lowered, key); !checked) return checked.error();
    }
  }

  for (const mongoc_host_list_t* h = mongoc_uri_get_hosts(uri.get()); h; h = h->next) {
    // docguard dials TCP only.
    if (h->family == AF_UNIX) {
      return Error{ErrorKind::kConfiguration, ErrorSource::kConfiguration,
                   std::string("upstream host ") + h->host +
                       ": Unix domain sockets are not supported; use host:port",
                   h->host};
    }
    out.seeds.emplace_back(h->host_and_port);
  }
  if (const char* srv = mongoc_uri_get_srv_hostname(uri.get())) {
    out.is_srv = true;
    out.srv_hostname = srv;
    const char* service = mongoc_uri_get_srv_service_name(uri.get());
    out.srv_service_name = service ? service : "mongodb";
  }
  if (const char* rs = mongoc_uri_get_replica_set(uri.get())) out.replica_set = rs;
  out.direct_connection =
      mongoc_uri_get_option_as_bool(uri.get(), MONGOC_URI_DIRECTCONNECTION, false);

  const mongoc_uri_t* u = uri.get();
  out.tls.enabled = mongoc_uri_get_tls(u);  // true by default for mongodb+srv://
  out.tls.ca_file = utf8_option(u, MONGOC_URI_TLSCAFILE);
  out.tls.certificate_key_file = utf8_option(u, MONGOC_URI_TLSCERTIFICATEKEYFILE);
  out.tls.certificate_key_file_password = utf8_option(u, MONGOC_URI_TLSCERTIFICATEKEYFILEPASSWORD);
  const bool insecure = mongoc_uri_get_option_as_bool(u, MONGOC_URI_TLSINSECURE, false);
  out.tls.allow_invalid_hostnames =
      insecure || mongoc_uri_get_option_as_bool(u, MONGOC_URI_TLSALLOWINVALIDHOSTNAMES, false);
  out.tls.allow_invalid_certificates =
      insecure || mongoc_uri_get_option_as_bool(u, MONGOC_URI_TLSALLOWINVALIDCERTIFICATES, false);

  using std::chrono::milliseconds;
  out.server_selection_timeout =
      milliseconds(mongoc_uri_get_option_as_int32(u, MONGOC_URI_SERVERSELECTIONTIMEOUTMS, 30000));
  out.heartbeat_frequency =
      milliseconds(mongoc_uri_get_option_as_int32(u, MONGOC_URI_HEARTBEATFREQUENCYMS, 10000));
  out.local_threshold =
      milliseconds(mongoc_uri_get_option_as_int32(u, MONGOC_URI_LOCALTHRESHOLDMS, 15));
  out.connect_timeout =
      milliseconds(mongoc_uri_get_option_as_int32(u, MONGOC_URI_CONNECTTIMEOUTMS, 10000));

  out.has_credentials = mongoc_uri_get_username(u) != nullptr;
  if (const char* mech = mongoc_uri_get_auth_mechanism(u)) out.auth_mechanism = mech;
  return out;
}

}  // namespace docguard::cluster
