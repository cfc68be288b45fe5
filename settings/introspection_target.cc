// Where and as whom docguard reads the cluster, from the proxy's settings.
#include "docguard/settings/introspection_target.h"

#include <algorithm>

#include "docguard/advisor/scan_arguments.h"
#include "docguard/cluster/upstream_uri.h"

namespace docguard::settings {

introspection::IntrospectorTarget introspection_target(const ProxyConfig& config) {
  const introspection::IntrospectionSettings& s = config.introspection;
  introspection::IntrospectorTarget target;
  // docguard's own TLS settings towards the upstream (a client certificate there is how x.509
  // authentication reaches introspection); an introspection URI of its own is taken as given.
  target.uri = s.uri.empty() ? libmongoc_upstream_uri(config) : s.uri;
  target.redacted_uri = cluster::redact_uri(target.uri);
  if (!s.credentials_file.empty()) {
    const auto credentials = advisor::read_credentials_file(s.credentials_file);
    if (!credentials) {
      throw ConfigError("introspection.credentials_file: " + credentials.error().message);
    }
    target.username = credentials->username;
    target.password = credentials->password;
  }
  target.profile_settings = config.advisor;
  target.max_namespaces =
      std::min(config.rules->tracking().max_namespaces, config.advisor.live_max_namespaces);
  return target;
}

}  // namespace docguard::settings
