// TLS contexts built from the configuration, once at start-up.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>

#include "docguard/proxy/config.h"

namespace docguard::proxy {

struct TlsContexts {
  std::unique_ptr<boost::asio::ssl::context> client_facing;  // null: clients speak plain TCP
  std::unique_ptr<boost::asio::ssl::context> upstream;       // null: plain TCP upstream
  UpstreamTlsSettings upstream_settings;  // effective_upstream_tls(config)
};

// Loads certificates and keys; throws ConfigError naming the file that failed.
TlsContexts make_tls_contexts(const ProxyConfig& config);

}  // namespace docguard::proxy
