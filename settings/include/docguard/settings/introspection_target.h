// The introspection layer's target from the proxy's settings: where and as whom docguard reads
// the cluster it guards.
#pragma once

#include "docguard/introspection/introspector.h"
#include "docguard/settings/proxy_settings.h"

namespace docguard::settings {

// introspection.uri or the upstream's URI, the upstream_tls settings as URI options, and the
// credentials file. Throws ConfigError with a clear message when the credentials file cannot be
// read.
introspection::IntrospectorTarget introspection_target(const ProxyConfig& config);

}  // namespace docguard::settings
