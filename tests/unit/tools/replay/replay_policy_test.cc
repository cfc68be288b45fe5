// What a replay sends: the allow-list, the redaction marker, docguard's own refusals,
// --read-only and --allow-writes-out, and the commands whose results cannot repeat.
#include "replay/replay_policy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/message.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/request_identity.h"
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

std::vector<uint8_t> legacy_command(std::string_view ns, const char* json) {
  const testing::Bson query(json);
  std::vector<uint8_t> b(codec::kHeaderSize + 4, 0);
  for (const char c : ns) b.push_back(static_cast<uint8_t>(c));
  b.push_back(0);
  b.resize(b.size() + 8, 0);
  const codec::BsonView q = query.view();
  for (uint32_t i = 0; i < q.size; ++i) b.push_back(q.data[i]);
  codec::write_header(
      b.data(), codec::MsgHeader{static_cast<int32_t>(b.size()), 7, 0, codec::OpCode::kQuery});
  return b;
}

std::vector<uint8_t> delete_on(std::string_view collection, std::string_view db) {
  codec::ScopedBson body;
  bson_append_utf8(body.get(), "delete", 6, collection.data(), static_cast<int>(collection.size()));
  bson_t deletes;
  bson_append_array_begin(body.get(), "deletes", 7, &deletes);
  bson_append_array_end(body.get(), &deletes);
  bson_append_utf8(body.get(), "$db", 3, db.data(), static_cast<int>(db.size()));
  return codec::OpMsgBuilder(3, 0).body(body.bytes()).finish();
}

TEST(ReplayPolicy, ALegacyCommandIsNeverSentWhateverItWraps) {
  // The server reads the first member: a ping, refused over OP_QUERY since 5.1 (352). A replay
  // once unwrapped the second member and sent a delete on the users.
  const auto hidden = legacy_command(
      "admin.$cmd",
      R"({"ping": 1, "$query": {"delete": "system.users", "deletes": [{"q": {}, "limit": 0}]}})");
  const RequestClass ping = classify_request(hidden, false, {});
  EXPECT_EQ(ping.skip, SkipReason::kLegacyCommand);
  EXPECT_EQ(ping.name, "ping");
  EXPECT_STREQ(skip_reason_name(ping.skip), "legacy_op_query_command");
  EXPECT_EQ(classify_request(legacy_command("shop.$cmd", R"({"delete": "items", "deletes": []})"),
                             false, {})
                .skip,
            SkipReason::kLegacyCommand);
  EXPECT_EQ(
      classify_request(legacy_command("admin.$cmd", R"({"$query": {"isMaster": 1}})"), false, {})
          .skip,
      SkipReason::kHandshake);
  EXPECT_EQ(classify_request(legacy_command("shop.items", R"({"a": 1})"), false, {}).skip,
            SkipReason::kLegacy);
}

TEST(ReplayPolicy, ADbTheServerRefusesIsNeverSent) {
  for (const std::string& db :
       {std::string("encryption\0x", 12), std::string("admin\0", 6), std::string()}) {
    EXPECT_EQ(classify_request(delete_on("__keyVault", db), false, {}).skip, SkipReason::kInvalid);
  }
  EXPECT_EQ(classify(R"({"delete": "items", "deletes": []})").skip, SkipReason::kInvalid);
  EXPECT_EQ(classify_request(delete_on("items", "shop"), false, {}).skip, SkipReason::kNone);
}

TEST(ReplayPolicy, WhatTheRecordedServerRefusedForItsFormIsNotSent) {
  const char* insert = R"({"insert": "c", "documents": [{"a": 1}], "$db": "d"})";
  const auto bytes = testing::request(insert)->bytes;
  EXPECT_EQ(classify_request(bytes, false, {}, 13).skip, SkipReason::kRefusedWhenRecorded);
  EXPECT_EQ(classify_request(bytes, false, {}, 40415).skip, SkipReason::kRefusedWhenRecorded);
  EXPECT_EQ(classify_request(bytes, false, {}, 0).skip, SkipReason::kNone);
  const auto reply = [](const char* json) { return testing::request(json)->bytes; };
  EXPECT_EQ(recorded_refusal_code(reply(R"({"ok": 0, "code": 352, "errmsg": "x"})")), 352);
  EXPECT_EQ(recorded_refusal_code(reply(R"({"ok": 0.0, "code": 13})")), 13);
  EXPECT_EQ(recorded_refusal_code(reply(R"({"ok": 0, "code": 11000})")), 0);
  EXPECT_EQ(recorded_refusal_code(reply(R"({"ok": 1, "code": 352})")), 0);
  EXPECT_EQ(recorded_refusal_code(reply(R"({"ok": 1, "n": 0})")), 0);
}

TEST(ReplayPolicy, AnAggregationsRunTimeCodesDoNotMeanItDidNothing) {
  // The server raises 2 and 14 from expressions while a pipeline runs ($add on a string), after
  // a $merge or $out wrote earlier batches: such an aggregate is replayed, not skipped.
  const auto merge =
      testing::request(
          R"({"aggregate": "c", "pipeline": [{"$project": {"t": {"$add": ["$a", 1]}}},
                             {"$merge": {"into": "out"}}], "cursor": {}, "$db": "d"})")
          ->bytes;
  ReplayPolicy writes_out;
  writes_out.allow_writes_out = true;
  for (int32_t code : {2, 9, 14, 72}) {
    EXPECT_EQ(classify_request(merge, false, writes_out, code).skip, SkipReason::kNone) << code;
    EXPECT_TRUE(codec::may_follow_work("mapReduce", code)) << code;
  }
  // Codes answered before the pipeline runs still mean it did nothing.
  for (int32_t code : {13, 59, 73, 352, 40413, 40414, 40415, 40571, 40621, 5739101}) {
    EXPECT_EQ(classify_request(merge, false, writes_out, code).skip,
              SkipReason::kRefusedWhenRecorded)
        << code;
  }
  // Other commands keep taking 2, 9, 14 and 72 as a refusal of their form.
  const auto find = testing::request(R"({"find": "c", "filter": {}, "$db": "d"})")->bytes;
  for (int32_t code : {2, 9, 14, 72}) {
    EXPECT_EQ(classify_request(find, false, {}, code).skip, SkipReason::kRefusedWhenRecorded)
        << code;
  }
}

}  // namespace
}  // namespace docguard::tools
