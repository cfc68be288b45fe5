#include "docguard/proxy/tls.h"

#include <boost/asio/ssl.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <cstdlib>
#include <fstream>
#include <string>

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

// One attribute value as RFC 2253 (section 2.4) writes it, and as MongoDB does, so the name is
// the one its users are created with: ',', '+', '"', '\\', '<', '>' and ';' after a backslash, a
// leading space or '#' and a trailing space too, and each byte of a multi-byte UTF-8 character as
// \XX (MongoDB's choice: its names stay ASCII). Control characters stay: logs escape them.
void append_rfc2253_value(std::string& out, std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  static constexpr std::string_view kSpecials = ",+\"\\<>;";
  for (size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c >= 0x80) {
      out.push_back('\\');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
      continue;
    }
    const bool edge = (i == 0 && (c == ' ' || c == '#')) || (i + 1 == value.size() && c == ' ');
    if (edge || kSpecials.find(static_cast<char>(c)) != std::string_view::npos) {
      out.push_back('\\');
    }
    out.push_back(static_cast<char>(c));
  }
}

}  // namespace

std::string x509_user_name(const X509_NAME* subject) {
  std::string out;
  const int count = X509_NAME_entry_count(subject);
  int previous_rdn = -1;
  for (int i = count - 1; i >= 0; --i) {
    const X509_NAME_ENTRY* entry = X509_NAME_get_entry(subject, i);
    const int rdn = X509_NAME_ENTRY_set(entry);
    if (i != count - 1) out.push_back(rdn == previous_rdn ? '+' : ',');
    previous_rdn = rdn;
    const ASN1_OBJECT* type = X509_NAME_ENTRY_get_object(entry);
    const int nid = OBJ_obj2nid(type);
    if (const char* short_name = nid == NID_undef ? nullptr : OBJ_nid2sn(nid)) {
      out.append(short_name);
    } else {
      char dotted[128];
      const int n = OBJ_obj2txt(dotted, sizeof dotted, type, 1);
      if (n <= 0 || n >= static_cast<int>(sizeof dotted)) return {};
      out.append(dotted, static_cast<size_t>(n));
    }
    out.push_back('=');
    unsigned char* utf8 = nullptr;
    const int length = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(entry));
    if (length < 0) return {};
    append_rfc2253_value(out, {reinterpret_cast<const char*>(utf8), static_cast<size_t>(length)});
    OPENSSL_free(utf8);
  }
  return out;
}

namespace {

// The passphrase of an encrypted key, from a file (its first line) or an environment variable;
// empty when neither is set. Never from a prompt: OpenSSL's default callback would ask on the
// terminal, and a service has none.
std::string key_password(const ClientTlsSettings& tls) {
  if (!tls.key_password_env.empty()) {
    const char* value = std::getenv(tls.key_password_env.c_str());
    if (value == nullptr) {
      throw ConfigError("tls.key_password_env: the environment variable " + tls.key_password_env +
                        " is not set");
    }
    return value;
  }
  if (tls.key_password_file.empty()) return {};
  std::ifstream in(tls.key_password_file);
  std::string line;
  if (!in || !std::getline(in, line)) {
    throw ConfigError("tls.key_password_file " + tls.key_password_file + ": cannot be read");
  }
  if (line.ends_with('\r')) line.pop_back();
  return line;
}

// The client-facing protocol floor and suites (tls.min_version, tls.ciphers, tls.ciphersuites).
void set_client_facing_suites(ssl::context& ctx, const ClientTlsSettings& tls) {
  SSL_CTX* native = ctx.native_handle();
  const int floor = tls.min_version == "1.3" ? TLS1_3_VERSION : TLS1_2_VERSION;
  if (SSL_CTX_set_min_proto_version(native, floor) != 1) {
    throw ConfigError("tls.min_version " + tls.min_version + ": not supported by OpenSSL here");
  }
  if (SSL_CTX_set_cipher_list(native, tls.ciphers.c_str()) != 1) {
    throw ConfigError("tls.ciphers: OpenSSL knows no suite in '" + tls.ciphers + "'");
  }
  if (!tls.ciphersuites.empty() &&
      SSL_CTX_set_ciphersuites(native, tls.ciphersuites.c_str()) != 1) {
    throw ConfigError("tls.ciphersuites: OpenSSL knows no suite in '" + tls.ciphersuites + "'");
  }
  // The server's order of preference, not the client's: a client offering a weak suite first
  // still gets a strong one when it offers one too.
  SSL_CTX_set_options(native, SSL_OP_CIPHER_SERVER_PREFERENCE);
}

}  // namespace

TlsContexts make_tls_contexts(const ProxyConfig& config) {
  TlsContexts out;
  if (config.tls.enabled()) {
    auto ctx = std::make_unique<ssl::context>(ssl::context::tls_server);
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                     ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                     ssl::context::single_dh_use);
    set_client_facing_suites(*ctx, config.tls);
    std::string password = key_password(config.tls);
    // Always a callback, so OpenSSL never prompts on a terminal for an encrypted key: without a
    // passphrase configured it gets an empty one and the key fails to load, with its name.
    ctx->set_password_callback(
        [password](std::size_t, ssl::context::password_purpose) { return password; });
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

std::string Stream::verified_peer_subject() {
  if (!tls_) return {};
  SSL* ssl = tls_->native_handle();
  // X509_V_OK is also the result when no certificate was asked for or sent.
  if ((SSL_get_verify_mode(ssl) & SSL_VERIFY_PEER) == 0 ||
      SSL_get_verify_result(ssl) != X509_V_OK) {
    return {};
  }
  const X509* certificate = SSL_get0_peer_certificate(ssl);
  if (certificate == nullptr) return {};
  return x509_user_name(X509_get_subject_name(certificate));
}

}  // namespace docguard::proxy
