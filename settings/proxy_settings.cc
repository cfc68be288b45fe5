// The proxy's settings that need no file: addresses, the upstream held once, and the TLS
// settings docguard's own libmongoc clients use.
#include "docguard/settings/proxy_settings.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace docguard::settings {

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
  config.upstream = check_upstream_uri(uri);
}

HostPort upstream_first_seed(const ProxyConfig& config) {
  if (config.upstream.seeds.empty()) return HostPort{config.upstream.srv_hostname, 27017};
  return parse_host_port(config.upstream.seeds.front(), "upstream");
}

UpstreamTlsSettings effective_upstream_tls(const ProxyConfig& config) {
  const auto& from_uri = config.upstream.tls;
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
  std::string uri = config.upstream.uri;
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

}  // namespace docguard::settings
