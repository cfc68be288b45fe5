// What a replay sends: the allow-list, the redaction marker, docguard's own refusals,
// --read-only and --allow-writes-out, and the commands whose results cannot repeat.
#include "replay/replay_policy.h"

#include <gtest/gtest.h>

#include "test_messages.h"

namespace docguard::tools {
namespace {

RequestClass classify(const char* body, bool answered = false, ReplayPolicy policy = {}) {
  return classify_request(testing::request(body)->bytes, answered, policy);
}

TEST(ReplayPolicy, OnlyAllowedCommandsAreSentTheRestCountedByName) {
  for (
      const char* body :
      {R"({"createUser": "appuser", "pwd": "[redacted by docguard]", "roles": [], "$db": "admin"})",
       R"({"updateUser": "appuser", "pwd": "x", "$db": "admin"})",
       R"({"dropUser": "appuser", "$db": "admin"})", R"({"setParameter": 1, "$db": "admin"})",
       R"({"applyOps": [], "$db": "admin"})", R"({"shutdown": 1, "$db": "admin"})",
       R"({"replSetReconfig": {}, "$db": "admin"})", R"({"dropDatabase": 1, "$db": "d"})",
       R"({"grantRolesToUser": "u", "roles": [], "$db": "admin"})"}) {
    const RequestClass c = classify(body);
    EXPECT_EQ(c.skip, SkipReason::kNotAllowed) << body;
    EXPECT_FALSE(c.name.empty()) << body;
  }
  for (const char* body :
       {R"({"find": "c", "$db": "d"})", R"({"insert": "c", "documents": [], "$db": "d"})",
        R"({"findAndModify": "c", "query": {}, "update": {}, "$db": "d"})",
        R"({"distinct": "c", "key": "a", "$db": "d"})",
        R"({"createIndexes": "c", "indexes": [], "$db": "d"})",
        R"({"commitTransaction": 1, "txnNumber": 1, "autocommit": false, "$db": "admin"})"}) {
    EXPECT_EQ(classify(body).skip, SkipReason::kNone) << body;
  }
}

TEST(ReplayPolicy, TheRedactionMarkerIsNeverSent) {
  EXPECT_EQ(
      classify(
          R"({"insert": "c", "documents": [{"password": "[redacted by docguard]"}], "$db": "d"})")
          .skip,
      SkipReason::kRedacted);
  EXPECT_EQ(classify(R"({"$docguardUnrecorded": "opcode 2002", "$db": "admin"})").skip,
            SkipReason::kMarker);
}

TEST(ReplayPolicy, NothingOnUsersRolesOrTheKeyVaultIsSentWhateverTheFileHolds) {
  // As a file not written by docguard's recorder could hold them: no marker anywhere.
  for (const char* body :
       {R"({"insert": "system.users", "documents": [{"_id": "admin.evil", "user": "evil"}],
            "$db": "admin"})",
        R"({"delete": "system.users", "deletes": [{"q": {}, "limit": 0}], "$db": "admin"})",
        R"({"find": "system.roles", "filter": {}, "$db": "admin"})",
        R"({"update": "tempusers", "updates": [{"q": {}, "u": {"$set": {"a": 1}}}],
            "$db": "admin"})",
        R"({"find": "__keyVault", "filter": {}, "$db": "encryption"})",
        R"({"aggregate": "c", "pipeline": [{"$lookup": {"from": "system.users", "as": "u",
            "pipeline": []}}], "cursor": {}, "$db": "admin"})"}) {
    EXPECT_EQ(classify(body).skip, SkipReason::kSecretNamespace) << body;
  }
  EXPECT_EQ(classify(R"({"find": "users", "filter": {}, "$db": "admin"})").skip, SkipReason::kNone);
}

TEST(ReplayPolicy, AnExplainOfAPipelineThatWritesIsAWriteOut) {
  EXPECT_EQ(classify(R"({"explain": {"aggregate": "c", "pipeline": [{"$merge": "x"}],
                         "cursor": {}}, "verbosity": "executionStats", "$db": "d"})")
                .skip,
            SkipReason::kWritesOut);
}

TEST(ReplayPolicy, WhatDocguardAnsweredIsNotReplayedUnlessAsSent) {
  const char* insert = R"({"insert": "c", "documents": [{"a": 1}], "$db": "d"})";
  EXPECT_EQ(classify(insert, true).skip, SkipReason::kAnsweredByDocguard);
  ReplayPolicy as_sent;
  as_sent.as_sent_by_client = true;
  EXPECT_EQ(classify(insert, true, as_sent).skip, SkipReason::kNone);
}

TEST(ReplayPolicy, ReadOnlyAndWritesOut) {
  ReplayPolicy read_only;
  read_only.read_only = true;
  EXPECT_EQ(classify(R"({"insert": "c", "documents": [], "$db": "d"})", false, read_only).skip,
            SkipReason::kReadOnly);
  EXPECT_EQ(classify(R"({"find": "c", "$db": "d"})", false, read_only).skip, SkipReason::kNone);
  const char* out = R"({"aggregate": "c", "pipeline": [{"$out": "x"}], "cursor": {}, "$db": "d"})";
  EXPECT_EQ(classify(out).skip, SkipReason::kWritesOut);
  ReplayPolicy allow;
  allow.allow_writes_out = true;
  const RequestClass allowed = classify(out, false, allow);
  EXPECT_EQ(allowed.skip, SkipReason::kNone);
  EXPECT_TRUE(allowed.is_write);
}

TEST(ReplayPolicy, UnrepeatableResultsAreNotComparable) {
  EXPECT_NE(
      classify(
          R"({"aggregate": "c", "pipeline": [{"$sample": {"size": 3}}], "cursor": {}, "$db": "d"})")
          .not_comparable.find("$sample"),
      std::string::npos);
  EXPECT_FALSE(
      classify(
          R"({"update": "c", "updates": [{"q": {}, "u": {"$currentDate": {"t": true}}}], "$db": "d"})")
          .not_comparable.empty());
  EXPECT_TRUE(classify(R"({"find": "c", "filter": {"a": 1}, "$db": "d"})").not_comparable.empty());
}

}  // namespace
}  // namespace docguard::tools
