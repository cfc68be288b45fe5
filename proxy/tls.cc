#include "docguard/proxy/tls.h"

#include <boost/asio/ssl.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>

#include "docguard/proxy/stream.h"

namespace docguard::proxy {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;

namespace {

void load(const std::string& what, const std::string& file, const auto& action) {
  try {
    action();
  } catch (const boost::system::system_error& e) {
    throw ConfigError(what + " " + file + ": " + e.code().message());
  }
}

}  // namespace

TlsContexts make_tls_contexts(const ProxyConfig& config) {
  TlsContexts out;
  if (config.tls.enabled()) {
    auto ctx = std::make_unique<ssl::context>(ssl::context::tls_server);
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                     ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                     ssl::context::single_dh_use);
    load("tls.cert_file", config.tls.cert_file,
         [&] { ctx->use_certificate_chain_file(config.tls.cert_file); });
    load("tls.key_file", config.tls.key_file,
         [&] { ctx->use_private_key_file(config.tls.key_file, ssl::context::pem); });
    if (!config.tls.ca_file.empty()) {
      load("tls.ca_file", config.tls.ca_file, [&] { ctx->load_verify_file(config.tls.ca_file); });
      ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
    }
    out.client_facing = std::move(ctx);
  }
  const auto up = effective_upstream_tls(config);
  out.upstream_settings = up;
  if (up.enabled) {
    auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                     ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    if (!up.ca_file.empty()) {
      load("upstream_tls.ca_file", up.ca_file, [&] { ctx->load_verify_file(up.ca_file); });
    } else {
      ctx->set_default_verify_paths();
    }
    if (!up.cert_file.empty()) {
      load("upstream_tls.cert_file", up.cert_file,
           [&] { ctx->use_certificate_chain_file(up.cert_file); });
      load("upstream_tls.key_file", up.key_file.empty() ? up.cert_file : up.key_file, [&] {
        ctx->use_private_key_file(up.key_file.empty() ? up.cert_file : up.key_file,
                                  ssl::context::pem);
      });
    }
    ctx->set_verify_mode(up.allow_invalid_certificates ? ssl::verify_none : ssl::verify_peer);
    out.upstream = std::move(ctx);
  }
  return out;
}

asio::awaitable<Stream::error_code> Stream::start_tls(ssl::context& context,
                                                      ssl::stream_base::handshake_type type,
                                                      const std::string& server_name,
                                                      bool verify_name) {
  tls_ = std::make_unique<ssl::stream<tcp::socket>>(std::move(plain_), context);
  if (type == ssl::stream_base::client && !server_name.empty()) {
    // SNI, and the certificate must name the server we meant to reach.
    SSL_set_tlsext_host_name(tls_->native_handle(), server_name.c_str());
    if (verify_name && context.native_handle() != nullptr &&
        SSL_CTX_get_verify_mode(context.native_handle()) != SSL_VERIFY_NONE) {
      tls_->set_verify_callback(ssl::host_name_verification(server_name));
    }
  }
  auto [ec] = co_await tls_->async_handshake(type, asio::as_tuple(asio::use_awaitable));
  co_return ec;
}

}  // namespace docguard::proxy
