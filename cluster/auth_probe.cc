#include "docguard/cluster/auth_probe.h"

#include <mongoc/mongoc.h>

#include "docguard/cluster/upstream_uri.h"

namespace docguard::cluster {

namespace {

// The server's codes for a connection that must authenticate first.
constexpr int32_t kUnauthorized = 13;
constexpr int32_t kAuthenticationFailed = 18;

}  // namespace

AuthProbeAnswer auth_probe_answer(bool ok, int32_t code, const std::string& message) {
  if (ok) return AuthProbeAnswer::kNotRequired;
  if (code == kUnauthorized || code == kAuthenticationFailed ||
      message.find("requires authentication") != std::string::npos) {
    return AuthProbeAnswer::kRequired;
  }
  return AuthProbeAnswer::kUnknown;
}

struct AuthProber::Client {
  mongoc_client_t* client = nullptr;
};

AuthProber::AuthProber(const std::string& uri_text, int timeout_ms) {
  ensure_mongoc_initialized();
  bson_error_t error;
  // Credentials in the URI would make libmongoc authenticate: the probe asks as a client
  // without any.
  mongoc_uri_t* uri = mongoc_uri_new_with_error(strip_credentials(uri_text).c_str(), &error);
  if (uri == nullptr) {
    failure_ = std::string("invalid URI: ") + error.message;
    return;
  }
  mongoc_uri_set_option_as_int32(uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS, timeout_ms);
  mongoc_uri_set_option_as_int32(uri, MONGOC_URI_CONNECTTIMEOUTMS, timeout_ms);
  mongoc_uri_set_option_as_int32(uri, MONGOC_URI_SOCKETTIMEOUTMS, timeout_ms);
  mongoc_client_t* client = mongoc_client_new_from_uri_with_error(uri, &error);
  mongoc_uri_destroy(uri);
  if (client == nullptr) {
    failure_ = error.message;
    return;
  }
  mongoc_client_set_appname(client, "docguard-auth-probe");
  client_ = new Client{client};
}

AuthProber::~AuthProber() {
  if (client_ == nullptr) return;
  mongoc_client_destroy(client_->client);
  delete client_;
}

AuthProbeResult AuthProber::ask() {
  AuthProbeResult out;
  if (client_ == nullptr) {
    out.message = failure_;
    return out;
  }
  bson_t command;
  bson_init(&command);
  BSON_APPEND_INT32(&command, "listDatabases", 1);
  BSON_APPEND_BOOL(&command, "nameOnly", true);
  bson_t reply;
  bson_error_t error;
  const bool ok =
      mongoc_client_command_simple(client_->client, "admin", &command, nullptr, &reply, &error);
  // A refusal the server sent has a server or query domain; not reaching a server is a stream
  // or selection error, which decides nothing.
  const bool answered =
      ok || error.domain == MONGOC_ERROR_SERVER || error.domain == MONGOC_ERROR_QUERY;
  if (!ok) {
    out.code = static_cast<int32_t>(error.code);
    out.message = error.message;
  }
  out.answer = answered ? auth_probe_answer(ok, out.code, out.message) : AuthProbeAnswer::kUnknown;
  bson_destroy(&reply);
  bson_destroy(&command);
  return out;
}

AuthProbeResult probe_upstream_auth(const std::string& uri, int timeout_ms) {
  return AuthProber(uri, timeout_ms).ask();
}

}  // namespace docguard::cluster
