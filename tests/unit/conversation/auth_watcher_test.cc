// The user a connection authenticated as, read from hand-built authentication conversations
// passing through a Conversation: SCRAM (with and without speculativeAuthenticate), PLAIN,
// X.509, failures, re-authentication and logout, a client certificate docguard verified, and the
// `users` rules that follow.
#include "docguard/conversation/auth_watcher.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <cstring>

#include "docguard/codec/op_query.h"
#include "docguard/conversation/conversation.h"
#include "docguard/rules/rule_set.h"
#include "docguard/settings/yaml_settings.h"
#include "test_messages.h"

namespace docguard::conversation {
namespace {
namespace DOCGUARD_UNITY_ID {

using Action = Conversation::RequestOutcome::Action;

TEST(AuthWatcherTest, ScramNamesItsUser) {
  EXPECT_EQ(AuthWatcher::scram_user("n,,n=alice,r=fyko+d2lbbFgONRv9qkxdawL"), "alice");
  EXPECT_EQ(AuthWatcher::scram_user("n,,n=a=2Cb=3Dc,r=x"), "a,b=c");
  EXPECT_EQ(AuthWatcher::scram_user("n,a=admin,n=bob,r=x"), "bob");
  EXPECT_EQ(AuthWatcher::scram_user("y,,n=carol,r=x"), "carol");
  EXPECT_EQ(AuthWatcher::scram_user("p=tls-server-end-point,,n=dave,r=x"), "dave");
  EXPECT_EQ(AuthWatcher::scram_user("n,,m=ext,n=erin,r=x"), "erin");
  EXPECT_EQ(AuthWatcher::scram_user("n,,n=\xc3\xa9mile,r=x"), "\xc3\xa9mile");
  EXPECT_EQ(AuthWatcher::scram_user("n,,n=a=ZZ,r=x"), "");  // not a valid escape
  EXPECT_EQ(AuthWatcher::scram_user("n,,r=x"), "");
  EXPECT_EQ(AuthWatcher::scram_user("garbage"), "");
  EXPECT_EQ(AuthWatcher::scram_user(""), "");
}

TEST(AuthWatcherTest, PlainNamesItsUserAndNothingElse) {
  using namespace std::string_view_literals;
  EXPECT_EQ(AuthWatcher::plain_user("\0alice\0secret"sv), "alice");
  EXPECT_EQ(AuthWatcher::plain_user("admin\0bob\0pw"sv), "bob");
  EXPECT_EQ(AuthWatcher::plain_user("alice"sv), "");
  EXPECT_EQ(AuthWatcher::plain_user("\0alice"sv), "");  // no password part: not PLAIN
}

std::string base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t n = static_cast<uint8_t>(in[i]) << 16;
    if (i + 1 < in.size()) n |= static_cast<uint8_t>(in[i + 1]) << 8;
    if (i + 2 < in.size()) n |= static_cast<uint8_t>(in[i + 2]);
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(i + 1 < in.size() ? kAlphabet[(n >> 6) & 63] : '=');
    out.push_back(i + 2 < in.size() ? kAlphabet[n & 63] : '=');
  }
  return out;
}

std::string binary(std::string_view payload) {
  return R"({"$binary": {"base64": ")" + base64(payload) + R"(", "subType": "00"}})";
}

std::string sasl_start(const char* mechanism, std::string_view payload, const char* db) {
  return std::string(R"({"saslStart": 1, "mechanism": ")") + mechanism + R"(", "payload": )" +
         binary(payload) + R"(, "$db": ")" + db + R"("})";
}

std::string sasl_continue(const char* db) {
  return std::string(R"({"saslContinue": 1, "conversationId": 1, "payload": )") +
         binary("c=biws,r=x,p=proof") + R"(, "$db": ")" + db + R"("})";
}

// A legacy OP_QUERY command: header, flags, "db.$cmd", skip, return, the document.
std::vector<uint8_t> op_query(const std::string& json, const std::string& db, int32_t id) {
  testing::Bson doc(json);
  std::vector<uint8_t> out(16, 0);
  auto put32 = [&](int32_t v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    out.insert(out.end(), p, p + 4);
  };
  put32(0);
  const std::string ns = db + ".$cmd";
  out.insert(out.end(), ns.begin(), ns.end());
  out.push_back(0);
  put32(0);
  put32(-1);
  const auto body = doc.view();
  out.insert(out.end(), body.data, body.data + body.size);
  const auto length = static_cast<int32_t>(out.size());
  const auto op = static_cast<int32_t>(codec::OpCode::kQuery);
  std::memcpy(out.data(), &length, 4);
  std::memcpy(out.data() + 4, &id, 4);
  std::memcpy(out.data() + 12, &op, 4);
  return out;
}

constexpr const char* kHelloReplyFields =
    R"("isWritablePrimary": true, "maxBsonObjectSize": 16777216, "maxMessageSizeBytes": 48000000,
       "maxWriteBatchSize": 100000, "minWireVersion": 0, "maxWireVersion": 21)";

struct Host : ConversationHost {
  int32_t new_request_id() override { return next--; }
  int32_t next = -1;
};

// A conversation whose engine blocks long arrays for the user "loader" (and X.509 users whose
// common name starts with "loader") only.
struct AuthConversation : ::testing::Test {
  explicit AuthConversation(const char* rules_yaml = R"(
mode: warn
rules:
  - {match: 'shop.*', users: [loader, 'CN=loader*'], action: block, max_array_length: 3}
)")
      : engine(settings::parse_rules(YAML::Load(rules_yaml), "test.yaml"), nullptr, nullptr) {
    settings.persona.persona = Persona::kMongos;
    settings.persona.advertised_address = "docguard:27017";
  }

  // Sends a request and the upstream's reply to it.
  void exchange(const std::string& request, const std::string& reply) {
    const int32_t id = next_id++;
    const auto out = conv.on_request(testing::op_msg(request.c_str(), id));
    ASSERT_EQ(out.action, Action::kForward);
    auto body = testing::json(reply.c_str());
    const auto bytes = codec::OpMsgBuilder(1000 + id, id).body(body.get()).finish();
    const auto back = conv.on_reply(bytes);
    ASSERT_FALSE(back.drop);
  }
  void scram(const char* mechanism, const char* user, const char* db, bool succeed = true) {
    exchange(sasl_start(mechanism, std::string("n,,n=") + user + ",r=nonce", db),
             R"({"conversationId": 1, "done": false, "payload": )" +
                 binary("r=nonce2,s=c2FsdA==,i=15000") + R"(, "ok": 1})");
    EXPECT_EQ(conv.user(), before_) << "a first step proves nothing";
    if (!succeed) {
      exchange(
          sasl_continue(db),
          R"({"ok": 0, "errmsg": "Authentication failed.", "code": 18, "codeName": "AuthenticationFailed"})");
      return;
    }
    exchange(sasl_continue(db), R"({"conversationId": 1, "done": false, "payload": )" +
                                    binary("v=signature") + R"(, "ok": 1})");
    EXPECT_EQ(conv.user(), before_);
    exchange(sasl_continue(db),
             R"({"conversationId": 1, "done": true, "payload": )" + binary("") + R"(, "ok": 1})");
  }
  // Whether an insert of a 4-element array is refused.
  bool insert_blocked() {
    const auto out = conv.on_request(testing::op_msg(
        R"({"insert": "items", "$db": "shop", "documents": [{"_id": 1, "tags": [1, 2, 3, 4]}]})",
        next_id++));
    if (out.action == Action::kForward) {
      conv.on_reply(
          codec::OpMsgBuilder(1, next_id - 1).body(testing::json(R"({"ok": 1})").get()).finish());
    }
    return out.action != Action::kForward;
  }
  void remember_user() { before_ = conv.user(); }

  rules::Engine engine;
  ConversationSettings settings;
  Host host;
  Conversation conv{engine, settings, "127.0.0.1:5", host};
  int32_t next_id = 10;
  std::string before_;
};

TEST_F(AuthConversation, ScramSha256ConfirmedByTheLastReply) {
  EXPECT_FALSE(insert_blocked());
  scram("SCRAM-SHA-256", "loader", "admin");
  EXPECT_EQ(conv.user(), "loader@admin");
  EXPECT_TRUE(insert_blocked());
}

TEST_F(AuthConversation, ScramSha1WithAnEscapedName) {
  scram("SCRAM-SHA-1", "a=2Cb", "shop");
  EXPECT_EQ(conv.user(), "a,b@shop");
  EXPECT_FALSE(insert_blocked());
}

TEST_F(AuthConversation, AFailedAttemptLeavesNoUser) {
  scram("SCRAM-SHA-256", "loader", "admin", false);
  EXPECT_EQ(conv.user(), "");
  EXPECT_FALSE(insert_blocked());
  exchange(sasl_start("SCRAM-SHA-256", "n,,n=loader,r=x", "admin"),
           R"({"ok": 0, "code": 18, "codeName": "AuthenticationFailed"})");
  EXPECT_EQ(conv.user(), "");
  // A saslContinue of a conversation that already failed confirms nothing.
  exchange(sasl_continue("admin"), R"({"done": true, "ok": 1})");
  EXPECT_EQ(conv.user(), "");
  EXPECT_FALSE(insert_blocked());
}

TEST_F(AuthConversation, ReauthenticationAndLogout) {
  scram("SCRAM-SHA-256", "loader", "admin");
  EXPECT_TRUE(insert_blocked());
  remember_user();
  scram("SCRAM-SHA-256", "reader", "admin");
  EXPECT_EQ(conv.user(), "reader@admin");
  EXPECT_FALSE(insert_blocked());
  remember_user();
  scram("SCRAM-SHA-256", "loader", "admin", false);  // refused: the server keeps "reader"
  EXPECT_EQ(conv.user(), "reader@admin");
  scram("SCRAM-SHA-1", "loader", "admin");
  EXPECT_TRUE(insert_blocked());
  exchange(R"({"logout": 1, "$db": "admin"})", R"({"ok": 0, "code": 13})");
  EXPECT_EQ(conv.user(), "loader@admin");  // a refused logout changes nothing
  exchange(R"({"logout": 1, "$db": "admin"})", R"({"ok": 1})");
  EXPECT_EQ(conv.user(), "");
  EXPECT_FALSE(insert_blocked());
}

TEST_F(AuthConversation, SpeculativeScramInHello) {
  exchange(R"({"hello": 1, "$db": "admin", "client": {"application": {"name": "etl"}},
               "speculativeAuthenticate": {"saslStart": 1, "mechanism": "SCRAM-SHA-256",
                 "payload": )" +
               binary("n,,n=loader,r=nonce") + R"(, "db": "admin"}})",
           std::string("{") + kHelloReplyFields +
               R"(, "speculativeAuthenticate": {"conversationId": 1, "done": false, "payload": )" +
               binary("r=nonce2,s=c2FsdA==,i=15000") + R"(}, "ok": 1})");
  EXPECT_EQ(conv.user(), "");
  exchange(sasl_continue("admin"), R"({"conversationId": 1, "done": false, "ok": 1})");
  EXPECT_EQ(conv.user(), "");
  exchange(sasl_continue("admin"), R"({"conversationId": 1, "done": true, "ok": 1})");
  EXPECT_EQ(conv.user(), "loader@admin");
  EXPECT_TRUE(insert_blocked());
}

TEST_F(AuthConversation, SpeculationNotTakenUpFallsBackToSaslStart) {
  exchange(R"({"hello": 1, "$db": "admin", "speculativeAuthenticate": {"saslStart": 1,
                 "mechanism": "SCRAM-SHA-256", "payload": )" +
               binary("n,,n=loader,r=nonce") + R"(, "db": "admin"}})",
           std::string("{") + kHelloReplyFields + R"(, "ok": 1})");
  exchange(sasl_continue("admin"), R"({"conversationId": 1, "done": true, "ok": 1})");
  EXPECT_EQ(conv.user(), "");  // no attempt was under way
  scram("SCRAM-SHA-1", "loader", "admin");
  EXPECT_EQ(conv.user(), "loader@admin");
}

TEST_F(AuthConversation, SpeculativeX509InALegacyHello) {
  const auto hello = op_query(R"({"isMaster": 1, "speculativeAuthenticate": {"authenticate": 1,
                                  "mechanism": "MONGODB-X509", "db": "$external"}})",
                              "admin", 7);
  ASSERT_EQ(conv.on_request(hello).action, Action::kForward);
  testing::Bson reply(std::string("{") + kHelloReplyFields +
                      R"(, "speculativeAuthenticate": {"dbname": "$external",
                           "user": "CN=loader,O=shop"}, "ok": 1})");
  conv.on_reply(codec::build_op_reply(100, 7, reply.view().bytes()));
  EXPECT_EQ(conv.user(), "CN=loader,O=shop@$external");
}

TEST_F(AuthConversation, X509Authenticate) {
  exchange(R"({"authenticate": 1, "mechanism": "MONGODB-X509", "$db": "$external"})",
           R"({"dbname": "$external", "user": "CN=app,O=shop", "ok": 1})");
  EXPECT_EQ(conv.user(), "CN=app,O=shop@$external");
  exchange(R"({"authenticate": 1, "mechanism": "MONGODB-X509", "user": "CN=other",
               "$db": "$external"})",
           R"({"ok": 1})");
  EXPECT_EQ(conv.user(), "CN=other@$external");
  exchange(
      R"({"authenticate": 1, "mechanism": "MONGODB-X509", "user": "CN=x", "$db": "$external"})",
      R"({"ok": 0, "code": 18})");
  EXPECT_EQ(conv.user(), "CN=other@$external");
}

TEST_F(AuthConversation, PlainInOneStep) {
  using namespace std::string_view_literals;
  exchange(sasl_start("PLAIN", "\0loader\0hunter2"sv, "$external"),
           R"({"conversationId": 1, "done": true, "payload": )" + binary("") + R"(, "ok": 1})");
  EXPECT_EQ(conv.user(), "loader@$external");
  EXPECT_TRUE(insert_blocked());
}

TEST_F(AuthConversation, MechanismsWithoutAReadableUserLeaveNone) {
  scram("SCRAM-SHA-256", "loader", "admin");
  exchange(sasl_start("GSSAPI", "opaque-token", "$external"),
           R"({"conversationId": 1, "done": true, "ok": 1})");
  EXPECT_EQ(conv.user(), "");
  EXPECT_FALSE(insert_blocked());
}

TEST_F(AuthConversation, AVerifiedCertificateNamesTheUserFromTheHandshake) {
  EXPECT_FALSE(insert_blocked());
  conv.set_certificate_user("CN=loader-7,OU=etl,O=Example");
  EXPECT_EQ(conv.user(), "CN=loader-7,OU=etl,O=Example@$external");
  EXPECT_TRUE(insert_blocked()) << "the scope is found again for the new user";
  // The server checks an X.509 authenticate against docguard's own certificate, not the
  // client's: its success confirms the certificate's user, whatever name it gives or returns.
  exchange(R"({"authenticate": 1, "mechanism": "MONGODB-X509", "user": "CN=reader,O=Example",
               "$db": "$external"})",
           R"({"dbname": "$external", "user": "CN=reader,O=Example", "ok": 1})");
  EXPECT_EQ(conv.user(), "CN=loader-7,OU=etl,O=Example@$external");
  exchange(R"({"authenticate": 1, "mechanism": "MONGODB-X509", "$db": "$external"})",
           R"({"dbname": "$external", "user": "CN=docguard,O=Proxy", "ok": 1})");
  EXPECT_EQ(conv.user(), "CN=loader-7,OU=etl,O=Example@$external");
  EXPECT_TRUE(insert_blocked());
}

TEST_F(AuthConversation, ASpeculativeX509HelloKeepsTheCertificateUser) {
  conv.set_certificate_user("CN=loader,O=Example");
  exchange(R"({"hello": 1, "$db": "admin", "speculativeAuthenticate": {"authenticate": 1,
               "mechanism": "MONGODB-X509", "db": "$external"}})",
           std::string("{") + kHelloReplyFields +
               R"(, "speculativeAuthenticate": {"dbname": "$external",
                    "user": "CN=docguard,O=Proxy"}, "ok": 1})");
  EXPECT_EQ(conv.user(), "CN=loader,O=Example@$external");
}

TEST_F(AuthConversation, APasswordUserReplacesTheCertificateUserUntilLogout) {
  conv.set_certificate_user("CN=loader,O=Example");
  remember_user();
  scram("SCRAM-SHA-256", "reader", "admin");
  EXPECT_EQ(conv.user(), "reader@admin");
  EXPECT_FALSE(insert_blocked());
  // Back to the only identity TLS still proves.
  exchange(R"({"logout": 1, "$db": "admin"})", R"({"ok": 1})");
  EXPECT_EQ(conv.user(), "CN=loader,O=Example@$external");
  EXPECT_TRUE(insert_blocked());
  // A mechanism that names no user leaves the certificate's too.
  exchange(sasl_start("GSSAPI", "opaque-token", "$external"),
           R"({"conversationId": 1, "done": true, "ok": 1})");
  EXPECT_EQ(conv.user(), "CN=loader,O=Example@$external");
  // An X.509 authenticate after a password user goes back to the certificate's user.
  scram("SCRAM-SHA-1", "reader", "admin");
  exchange(R"({"authenticate": 1, "mechanism": "MONGODB-X509", "$db": "$external"})",
           R"({"dbname": "$external", "user": "CN=docguard,O=Proxy", "ok": 1})");
  EXPECT_EQ(conv.user(), "CN=loader,O=Example@$external");
}

TEST_F(AuthConversation, WithoutACertificateX509StillNamesItsUser) {
  conv.set_certificate_user("");
  EXPECT_EQ(conv.user(), "");
  exchange(R"({"authenticate": 1, "mechanism": "MONGODB-X509", "$db": "$external"})",
           R"({"dbname": "$external", "user": "CN=loader,O=Example", "ok": 1})");
  EXPECT_EQ(conv.user(), "CN=loader,O=Example@$external");
  exchange(R"({"logout": 1, "$db": "$external"})", R"({"ok": 1})");
  EXPECT_EQ(conv.user(), "");
}

// An upstream that requires authentication (upstream_auth): a connection's commands are judged
// only once the server confirmed an authentication on it, whichever mechanism, until a logout.
struct AuthRequiredUpstream : AuthConversation {
  AuthRequiredUpstream()
      : AuthConversation("rules:\n  - {match: 'shop.*', action: block, max_array_length: 3}\n") {
    settings.upstream_requires_auth = &requires_auth;
  }
  std::atomic<bool> requires_auth{true};
};

TEST_F(AuthRequiredUpstream, NothingIsJudgedBeforeTheServerConfirmsAnAuthentication) {
  EXPECT_FALSE(insert_blocked());
  EXPECT_TRUE(conv.request_violations().empty());
  scram("SCRAM-SHA-256", "loader", "admin", false);  // refused: still unauthenticated
  EXPECT_FALSE(insert_blocked());
  scram("SCRAM-SHA-256", "loader", "admin");
  EXPECT_TRUE(insert_blocked());
  exchange(R"({"logout": 1, "$db": "admin"})", R"({"ok": 1})");
  EXPECT_FALSE(insert_blocked());
}

TEST_F(AuthRequiredUpstream, AMechanismNamingNoUserStillAuthenticates) {
  exchange(sasl_start("GSSAPI", "opaque-token", "$external"),
           R"({"conversationId": 1, "done": true, "ok": 1})");
  EXPECT_EQ(conv.user(), "");
  EXPECT_TRUE(insert_blocked());
}

TEST_F(AuthRequiredUpstream, AVerifiedCertificateAloneDoesNotAuthenticateWithTheServer) {
  conv.set_certificate_user("CN=loader,O=Example");
  EXPECT_FALSE(insert_blocked());
}

TEST_F(AuthRequiredUpstream, AnUpstreamWithoutAuthenticationJudgesEveryone) {
  requires_auth = false;
  EXPECT_TRUE(insert_blocked());
  requires_auth = true;
  EXPECT_FALSE(insert_blocked());
}

TEST_F(AuthRequiredUpstream, SpeculativeAuthenticationInHelloCounts) {
  const int32_t id = next_id++;
  const std::string hello =
      R"({"hello": 1, "$db": "admin", "speculativeAuthenticate": {"saslStart": 1, )"
      R"("mechanism": "SCRAM-SHA-256", "payload": )" +
      binary("n,,n=loader,r=nonce") + R"(, "db": "admin"}})";
  ASSERT_EQ(conv.on_request(testing::op_msg(hello.c_str(), id)).action, Action::kForward);
  const std::string reply = std::string("{") + kHelloReplyFields +
                            R"(, "speculativeAuthenticate": {"conversationId": 1, "done": true, )"
                            R"("payload": )" +
                            binary("v=sig") + R"(}, "ok": 1})";
  conv.on_reply(codec::OpMsgBuilder(2000, id).body(testing::json(reply.c_str()).get()).finish());
  EXPECT_TRUE(insert_blocked());
}

TEST_F(AuthRequiredUpstream, AStepIsBelievedOnlyFromTheReplyToItsOwnRequest) {
  // A ping and an authenticate under one request id, sent together: the ping's ok: 1 answers
  // first and must not be taken for the authentication's.
  const int32_t id = next_id++;
  ASSERT_EQ(conv.on_request(testing::op_msg(R"({"ping": 1, "$db": "admin"})", id)).action,
            Action::kForward);
  ASSERT_EQ(conv
                .on_request(testing::op_msg(
                    R"({"authenticate": 1, "mechanism": "MONGODB-X509", "$db": "$external"})", id))
                .action,
            Action::kForward);
  conv.on_reply(codec::OpMsgBuilder(3000, id).body(testing::json(R"({"ok": 1})").get()).finish());
  conv.on_reply(
      codec::OpMsgBuilder(3001, id)
          .body(testing::json(R"({"ok": 0, "code": 59, "codeName": "CommandNotFound"})").get())
          .finish());
  EXPECT_FALSE(conv.judges());
  EXPECT_FALSE(insert_blocked());
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::conversation
