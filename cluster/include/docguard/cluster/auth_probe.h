// Whether the upstream answers commands on a connection that has not authenticated: docguard
// asks it once on a connection of its own, without credentials, the way an unauthenticated
// client would be answered. The server refuses a command that requires authentication with
// code 13 Unauthorized ("command listDatabases requires authentication"); listDatabases
// requires it on every server that has authentication on, so its answer decides.
#pragma once

#include <cstdint>
#include <string>

namespace docguard::cluster {

enum class AuthProbeAnswer : uint8_t {
  kRequired,     // refused: 13 Unauthorized, 18 AuthenticationFailed, or "requires authentication"
  kNotRequired,  // answered
  kUnknown,      // not reached, or refused for another reason: ask again later
};

struct AuthProbeResult {
  AuthProbeAnswer answer = AuthProbeAnswer::kUnknown;
  int32_t code = 0;     // the server's code when it refused
  std::string message;  // the server's errmsg, or why it could not ask
};

// What an answer means, by the server's code and errmsg (exposed for tests).
AuthProbeAnswer auth_probe_answer(bool ok, int32_t code, const std::string& message);

// Sends {listDatabases: 1, nameOnly: true} to the `admin` database of the cluster at `uri`
// without authenticating (the URI's user and password, if any, are left out), waiting at most
// `timeout_ms` for a server. Blocking: never on an io thread.
AuthProbeResult probe_upstream_auth(const std::string& uri, int timeout_ms);

// The same question asked again and again over one client (its connection and server session
// kept between probes, so asking costs no handshake and leaves no session to end each time).
// Used by one thread at a time.
class AuthProber {
 public:
  AuthProber(const std::string& uri, int timeout_ms);
  ~AuthProber();
  AuthProber(const AuthProber&) = delete;
  AuthProber& operator=(const AuthProber&) = delete;
  AuthProbeResult ask();

 private:
  struct Client;
  Client* client_ = nullptr;  // null when the URI could not be used (ask() then says why)
  std::string failure_;
};

}  // namespace docguard::cluster
