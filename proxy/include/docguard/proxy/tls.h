// TLS contexts built from the configuration, once at start-up, and the user a verified client
// certificate names.
#pragma once

#include <openssl/x509.h>

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "docguard/proxy/config.h"

namespace docguard::proxy {

struct TlsContexts {
  std::unique_ptr<boost::asio::ssl::context> client_facing;  // null: clients speak plain TCP
  std::unique_ptr<boost::asio::ssl::context> upstream;       // null: plain TCP upstream
  UpstreamTlsSettings upstream_settings;                     // effective_upstream_tls(config)
};

// Loads certificates and keys; throws ConfigError naming the file that failed.
TlsContexts make_tls_contexts(const ProxyConfig& config);

// A certificate subject as MongoDB names the X.509 user it authenticates: RFC 2253, the last RDN
// first ("CN=app1,OU=billing,O=Example"), OpenSSL's short names for attribute types (a dotted
// OID where it has none), '+' between the values of a multi-valued RDN, and the values escaped
// as MongoDB escapes them (see tls.cc). "" for a subject whose values are not strings.
std::string x509_user_name(const X509_NAME* subject);

}  // namespace docguard::proxy
