// Which user a connection authenticated as, read from the authentication conversation as it
// passes through. docguard never answers, changes or delays an authentication message: it reads
// the user a mechanism names in its first message and believes it once the server's reply says
// the conversation succeeded.
//
//   SCRAM-SHA-1, SCRAM-SHA-256  saslStart's payload "n,,n=USER,r=..." (USER with "=2C" for ',' and
//                               "=3D" for '='), confirmed by the reply with done: true and ok: 1
//                               (saslStart's, or a later saslContinue's).
//   PLAIN                       saslStart's payload "\0USER\0PASSWORD": only USER is read.
//   MONGODB-X509                authenticate's reply (`user`, `dbname`), or its request's `user`.
//   speculativeAuthenticate     the same first messages inside hello; hello's reply holding
//                               speculativeAuthenticate continues (or, done, confirms) them.
//   logout                      a successful one leaves the connection without a user.
//
// Other mechanisms (GSSAPI, MONGODB-AWS, MONGODB-OIDC) name no user docguard can read: after one
// succeeds the connection has no user. A failed attempt leaves the previous user in place, as the
// server does. Payloads are read in place; nothing but the user name is copied or kept.
//
// A client certificate docguard verified itself (it terminates the client's TLS, with
// tls.ca_file) names a user from the handshake on: its subject as MongoDB names X.509 users,
// "CN=app1,OU=billing,O=Example" with database "$external". TLS proved it, so no command has to.
// The server never sees that certificate (docguard's upstream connection presents its own, if
// any), so a MONGODB-X509 `authenticate` cannot prove another name: one that succeeds leaves the
// certificate's user, whatever name it gives or its reply returns. A mechanism that names a user
// (SCRAM, PLAIN) still replaces it once the server confirms, as without a certificate; where the
// connection would otherwise have no user (logout, a mechanism naming none) it has the
// certificate's.
//
// Apart from the user, it tells whether the server itself takes the connection as authenticated
// (authenticated()): a mechanism it confirmed, whichever, naming a user or not, until a logout
// the server confirms. A certificate docguard verified does not count: the server never saw it.
// docguard judges a connection's commands only once the server would (upstream_auth).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/command_view.h"

namespace docguard::conversation {

class AuthWatcher {
 public:
  // What a request's reply tells: kNone when the request is not part of an authentication.
  enum class Step : uint8_t { kNone, kSaslStart, kSaslContinue, kAuthenticate, kLogout, kHello };

  // An OP_MSG request (a hello's speculativeAuthenticate included).
  Step on_request(const codec::CommandView& command);
  // A legacy OP_QUERY hello: its command document and the database it was sent to.
  Step on_legacy_hello(const codec::BsonView& hello, std::string_view db);
  // The reply to a request whose step was not kNone. True when the user changed.
  bool on_reply(Step step, const codec::BsonView& reply);

  // "name@db" once authenticated, else empty.
  const std::string& user() const { return user_; }
  // The server confirmed an authentication on this connection (any mechanism), and no logout
  // since.
  bool authenticated() const { return authenticated_; }
  // The subject of the client certificate docguard verified (tls.ca_file), in the form
  // x509_user_name gives: the connection's user from now on, as described above.
  void set_certificate_user(std::string_view subject);
  // The user a recording's side file names ("name@db", or empty): an offline replay's redacted
  // authentication cannot tell it, so it is set as recorded, any attempt under way forgotten.
  void set_recorded_user(std::string_view user);

  // Exposed for tests: the user a mechanism's first payload names ("" when it names none).
  static std::string scram_user(std::string_view payload);
  static std::string plain_user(std::string_view payload);

 private:
  // A first message (saslStart or authenticate) and the database it authenticates against.
  Step start(const codec::BsonView& doc, std::string_view command, std::string_view db);
  bool confirm(std::string_view name, std::string_view db);
  bool become(std::string user);

  struct Attempt {
    bool active = false;
    std::string name;  // "" when the mechanism names no user docguard can read
    std::string db;
    bool x509 = false;
  } attempt_;
  std::string user_;
  bool authenticated_ = false;
  std::string certificate_user_;  // "subject@$external", or empty without a verified certificate
};

}  // namespace docguard::conversation
