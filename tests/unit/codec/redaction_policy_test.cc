// The recording's redaction as a policy: secrets found by field name at any depth, by the
// namespace their documents belong to, by the shape of an authentication step, and by the
// user's own fields and namespaces. The property test plants secrets at random depths in every
// position the policy names and checks that none survives.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "docguard/codec/op_msg.h"
#include "docguard/codec/recording_redaction.h"
#include "test_messages.h"

namespace docguard::codec {
namespace {

using testing::leaks;

using testing::json;
using testing::op_msg;

std::string policy_text(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

std::vector<uint8_t> reply_message(const char* body, int32_t response_to = 1) {
  return OpMsgBuilder(100, response_to).body(json(body).get()).finish();
}

TEST(RedactionPolicy, UsersInfoCredentialsAreRedactedInTheReply) {
  const auto out = redact_reply(
      reply_message(R"({"users": [{"user": "app", "db": "admin", "credentials": {"SCRAM-SHA-256":
             {"iterationCount": 15000, "salt": "SALT-SECRET", "storedKey": "STORED-SECRET",
              "serverKey": "SERVER-SECRET"}}}], "ok": 1})"),
      false, kDefaultMaxMessageBytes);
  EXPECT_FALSE(leaks(out, "SALT-SECRET"));
  EXPECT_FALSE(leaks(out, "STORED-SECRET"));
  EXPECT_TRUE(leaks(out, "\"app\"") || leaks(out, "app"));
}

TEST(RedactionPolicy, AFindOnSystemUsersKeepsOnlyTheCursorsIds) {
  const auto request = redact_request(
      op_msg(R"({"find": "system.users", "filter": {"user": "FILTER-SECRET"}, "$db": "admin"})"),
      kDefaultMaxMessageBytes);
  EXPECT_TRUE(request.sensitive);
  EXPECT_FALSE(leaks(request, "FILTER-SECRET"));
  // Even when the request was not seen (a filter left it out), the cursor's ns tells.
  const auto out = redact_reply(reply_message(R"({"cursor": {"id": 0, "ns": "admin.system.users",
                "firstBatch": [{"_id": "admin.app", "credentials": {"x": "CRED-SECRET"},
                                "user": "USERNAME-IN-DOC"}]}, "ok": 1})"),
                                false, kDefaultMaxMessageBytes);
  EXPECT_FALSE(leaks(out, "CRED-SECRET"));
  EXPECT_FALSE(leaks(out, "USERNAME-IN-DOC"));
  EXPECT_TRUE(leaks(out, "admin.system.users"));
}

TEST(RedactionPolicy, WritesToStagingUsersAndTheKeyVaultAreRedacted) {
  for (
      const char* body :
      {R"({"insert": "tempusers", "documents": [{"user": "u", "pwd": "P1-SECRET"}], "$db": "admin"})",
       R"({"insert": "__keyVault", "documents": [{"keyMaterial": {"$binary": {"base64": "S0VZ", "subType": "00"}}, "note": "P1-SECRET"}], "$db": "encryption"})",
       R"({"update": "system.roles", "updates": [{"q": {}, "u": {"$set": {"x": "P1-SECRET"}}}], "$db": "admin"})"}) {
    const auto out = redact_request(op_msg(body), kDefaultMaxMessageBytes);
    EXPECT_FALSE(leaks(out, "P1-SECRET")) << body;
    EXPECT_TRUE(out.sensitive) << body;
  }
}

TEST(RedactionPolicy, WrappersAndStagesAreLookedInto) {
  const auto apply = redact_request(
      op_msg(
          R"({"applyOps": [{"op": "c", "ns": "admin.$cmd", "o": {"createUser": "x", "pwd": "NESTED-PWD"}},
                              {"op": "i", "ns": "admin.system.users", "o": {"_id": "admin.y", "hash": "OPLOG-SECRET"}}],
                "$db": "admin"})"),
      kDefaultMaxMessageBytes);
  EXPECT_FALSE(leaks(apply, "NESTED-PWD"));
  EXPECT_FALSE(leaks(apply, "OPLOG-SECRET"));
  const auto out_s3 =
      redact_request(op_msg(R"({"aggregate": "c", "pipeline": [{"$out": {"s3": {"bucket": "b",
                 "filename": "https://AKIA:S3-PASSWORD@host/x"}}}], "cursor": {}, "$db": "d"})"),
                     kDefaultMaxMessageBytes);
  EXPECT_FALSE(leaks(out_s3, "S3-PASSWORD"));
  const auto lookup = redact_request(
      op_msg(R"({"aggregate": "c", "pipeline": [{"$unionWith": "system.users"}], "cursor": {},
                 "note": "UNION-SECRET", "$db": "admin"})"),
      kDefaultMaxMessageBytes);
  EXPECT_TRUE(lookup.sensitive);
  EXPECT_FALSE(leaks(lookup, "UNION-SECRET"));
}

TEST(RedactionPolicy, ParametersAndTheirRepliesAreRedacted) {
  const auto set = redact_request(
      op_msg(R"({"setParameter": 1, "ldapQueryPassword": "LDAP-SECRET", "$db": "admin"})"),
      kDefaultMaxMessageBytes);
  EXPECT_TRUE(set.sensitive);
  EXPECT_FALSE(leaks(set, "LDAP-SECRET"));
  const auto cluster = redact_request(
      op_msg(R"({"setClusterParameter": {"p": {"value": "CLUSTER-SECRET"}}, "$db": "admin"})"),
      kDefaultMaxMessageBytes);
  EXPECT_FALSE(leaks(cluster, "CLUSTER-SECRET"));
  const auto was = redact_reply(reply_message(R"({"was": "OLD-SECRET", "ok": 1})"), true,
                                kDefaultMaxMessageBytes);
  EXPECT_FALSE(leaks(was, "OLD-SECRET"));
}

TEST(RedactionPolicy, AnAuthenticationStepIsRedactedWhateverItAnswers) {
  // The reply arrives without its request having been recorded (a users: filter).
  const auto out = redact_reply(
      reply_message(
          R"({"conversationId": 1, "done": true, "payload": "v=SERVER-SIGNATURE", "ok": 1})"),
      /*to_sensitive=*/false, kDefaultMaxMessageBytes);
  EXPECT_FALSE(leaks(out, "SERVER-SIGNATURE"));
  EXPECT_TRUE(leaks(out, "conversationId"));
}

TEST(RedactionPolicy, ADottedPathThroughASecretFieldIsSecret) {
  const auto update =
      redact_request(op_msg(R"({"update": "profiles", "updates": [{"q": {"_id": 1}, "u": {"$set":
                {"account.pwd": "DOTTED-SECRET", "creds.0.salt": "SALT-SECRET", "pwdx": "kept-1",
                 "account.name": "kept-2"}}}], "$db": "shop"})"),
                     kDefaultMaxMessageBytes);
  EXPECT_FALSE(leaks(update, "DOTTED-SECRET"));
  EXPECT_FALSE(leaks(update, "SALT-SECRET"));
  EXPECT_TRUE(leaks(update, "kept-1"));
  EXPECT_TRUE(leaks(update, "kept-2"));
}

TEST(RedactionPolicy, TheUsersOwnFieldsAndNamespaces) {
  RedactionPolicy policy;
  policy.fields = {"ssn", "card.number"};
  policy.namespaces = {"hr.*"};
  const auto insert = redact_request(
      op_msg(
          R"({"insert": "people", "documents": [{"ssn": "SSN-SECRET", "card": {"number": "CARD-SECRET", "brand": "visa"},
                  "number": 7}], "$db": "shop"})"),
      kDefaultMaxMessageBytes, policy);
  EXPECT_FALSE(leaks(insert, "SSN-SECRET"));
  EXPECT_FALSE(leaks(insert, "CARD-SECRET"));
  EXPECT_TRUE(leaks(insert, "visa"));
  const auto hr = redact_request(
      op_msg(R"({"insert": "salaries", "documents": [{"amount": "HR-SECRET"}], "$db": "hr"})"),
      kDefaultMaxMessageBytes, policy);
  EXPECT_FALSE(leaks(hr, "HR-SECRET"));
  policy.reply_documents = false;
  const auto found = redact_reply(
      reply_message(
          R"({"cursor": {"id": 5, "ns": "shop.c", "firstBatch": [{"a": "DOC-VALUE"}]}, "n": 1, "ok": 1})"),
      false, kDefaultMaxMessageBytes, policy);
  EXPECT_FALSE(leaks(found, "DOC-VALUE"));
  EXPECT_TRUE(leaks(found, "shop.c"));
}

TEST(RedactionPolicy, ALegacyQueryOnTheUsersCollectionIsSensitive) {
  const auto filter = json(R"({"user": "LEGACY-SECRET"})");
  std::vector<uint8_t> msg(kHeaderSize);
  const auto le32 = [&msg](int32_t v) {
    msg.resize(msg.size() + 4);
    store_le32(msg.data() + msg.size() - 4, v);
  };
  le32(0);
  const std::string ns = "admin.system.users";
  msg.insert(msg.end(), ns.begin(), ns.end());
  msg.push_back(0);
  le32(0);
  le32(-1);
  const auto q = testing::view(filter).bytes();
  msg.insert(msg.end(), q.begin(), q.end());
  write_header(msg.data(), {static_cast<int32_t>(msg.size()), 3, 0, OpCode::kQuery});
  const auto out = redact_request(msg, kDefaultMaxMessageBytes);
  EXPECT_TRUE(out.sensitive);
  EXPECT_FALSE(leaks(out, "LEGACY-SECRET"));
}

TEST(RedactionPolicy, MarkersCarryADatabase) {
  const auto marker = unrecorded_marker(3, 0, "why");
  EXPECT_NE(policy_text(marker).find("$db"), std::string::npos);
}

TEST(RedactionPolicy, TooDeepADocumentBecomesAMarker) {
  // 300 levels: past what the walk follows (JSON text cannot say it: its reader stops sooner).
  constexpr size_t kLevels = 301;
  static bson_t levels[kLevels];  // NOLINT(*-avoid-c-arrays): bson_t's alignment stays
  bson_init(&levels[0]);
  BSON_APPEND_UTF8(&levels[0], "insert", "c");
  for (size_t i = 1; i < kLevels; ++i) {
    bson_append_document_begin(&levels[i - 1], "a", 1, &levels[i]);
  }
  BSON_APPEND_UTF8(&levels[kLevels - 1], "pwd", "DEEP-SECRET");
  for (size_t i = kLevels - 1; i > 0; --i) bson_append_document_end(&levels[i - 1], &levels[i]);
  BSON_APPEND_UTF8(&levels[0], "$db", "d");
  const auto msg = OpMsgBuilder(1, 0).body(&levels[0]).finish();
  bson_destroy(&levels[0]);
  const auto out = redact_request(msg, kDefaultMaxMessageBytes);
  EXPECT_TRUE(out.marker);
  EXPECT_FALSE(leaks(out, "DEEP-SECRET"));
}

// The property: a secret planted under any secret field name, at any depth, inside documents
// and arrays, in a request's body, its sequences or a reply, never reaches the bytes.
TEST(RedactionPolicy, PlantedSecretsNeverSurvive) {
  const std::vector<std::string> secret_keys = {
      "pwd",          "credentials",      "storedKey",        "serverKey",
      "salt",         "keyMaterial",      "compactionTokens", "speculativeAuthenticate",
      "userPassword", "api_secret",       "customData",       "profile.pwd",
      "creds.0.salt", "a.$.credentials.x"};  // dotted: $set paths through a secret field
  std::mt19937 random(20261205);
  for (int round = 0; round < 400; ++round) {
    const std::string secret = "PLANT" + std::to_string(round) + "X";
    const std::string& key = secret_keys[random() % secret_keys.size()];
    std::string value = "{\"" + key + "\": \"" + secret + "\"}";
    const int depth = static_cast<int>(random() % 12);
    for (int i = 0; i < depth; ++i) {
      value = random() % 2 == 0 ? "{\"f" + std::to_string(i) + "\": " + value + "}"
                                : "[1, " + value + "]";
    }
    if (value[0] == '[') value = "{\"wrap\": " + value + "}";
    const int where = static_cast<int>(random() % 4);
    RecordableMessage out;
    if (where == 0) {
      out = redact_request(
          op_msg(("{\"insert\": \"c\", \"documents\": [" + value + "], \"$db\": \"d\"}").c_str()),
          kDefaultMaxMessageBytes);
    } else if (where == 1) {
      const auto doc = json(value.c_str());
      const auto body = json(R"({"insert": "c", "$db": "d"})");
      out = redact_request(
          OpMsgBuilder(1, 0).body(body.get()).sequence("documents", {testing::view(doc)}).finish(),
          kDefaultMaxMessageBytes);
    } else if (where == 2) {
      out = redact_request(op_msg(("{\"update\": \"c\", \"updates\": [{\"q\": " + value +
                                   ", \"u\": {\"$set\": " + value + "}}], \"$db\": \"d\"}")
                                      .c_str()),
                           kDefaultMaxMessageBytes);
    } else {
      out = redact_reply(
          reply_message(("{\"cursor\": {\"id\": 0, \"ns\": \"d.c\", \"firstBatch\": [" + value +
                         "]}, \"ok\": 1}")
                            .c_str()),
          false, kDefaultMaxMessageBytes);
    }
    ASSERT_FALSE(leaks(out, secret)) << value << " at " << where;
    ASSERT_FALSE(out.marker) << value;
  }
}

}  // namespace
}  // namespace docguard::codec
