// Where and as whom docguard reads the cluster, from the proxy's settings.
#include <algorithm>

#include "docguard/advisor/scan_arguments.h"
#include "docguard/cluster/upstream_uri.h"
#include "docguard/proxy/config.h"
#include "docguard/proxy/introspector.h"

namespace docguard::proxy {
namespace {

std::string with_option(std::string uri, const std::string& option) {
  const size_t slash = uri.find('/', uri.find("://") + 3);
  if (slash == std::string::npos) uri += "/";
  uri += uri.find('?') == std::string::npos ? "?" : "&";
  return uri + option;
}

}  // namespace

IntrospectorTarget introspection_target(const ProxyConfig& config) {
  const IntrospectionSettings& s = config.introspection;
  IntrospectorTarget target;
  target.uri = s.uri.empty() ? config.upstream_uri : s.uri;
  if (s.uri.empty()) {
    // docguard's own TLS settings towards the upstream, as URI options libmongoc reads (a client
    // certificate here is how x.509 authentication reaches introspection).
    const UpstreamTlsSettings tls = effective_upstream_tls(config);
    if (tls.enabled && target.uri.find("tls=") == std::string::npos &&
        target.uri.find("ssl=") == std::string::npos) {
      target.uri = with_option(target.uri, "tls=true");
      if (!tls.ca_file.empty()) target.uri = with_option(target.uri, "tlsCAFile=" + tls.ca_file);
      if (!tls.cert_file.empty() && (tls.key_file.empty() || tls.key_file == tls.cert_file)) {
        target.uri = with_option(target.uri, "tlsCertificateKeyFile=" + tls.cert_file);
      }
      if (tls.allow_invalid_certificates) {
        target.uri = with_option(target.uri, "tlsAllowInvalidCertificates=true");
      }
      if (tls.allow_invalid_hostnames) {
        target.uri = with_option(target.uri, "tlsAllowInvalidHostnames=true");
      }
    }
  }
  target.redacted_uri = cluster::redact_uri(target.uri);
  if (!s.credentials_file.empty()) {
    advisor::Credentials credentials;
    std::string why;
    if (!advisor::read_credentials_file(s.credentials_file, &credentials, &why)) {
      throw ConfigError("introspection.credentials_file: " + why);
    }
    target.username = credentials.username;
    target.password = credentials.password;
  }
  target.profile_settings = config.advisor;
  target.max_namespaces =
      std::min(config.rules->tracking().max_namespaces, config.advisor.live_max_namespaces);
  return target;
}

}  // namespace docguard::proxy
