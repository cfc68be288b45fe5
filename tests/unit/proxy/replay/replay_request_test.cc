// The replay's request rewrite: document sequences into the body's array, $clusterTime, $db
// and $readPreference out, lsids and cursor ids remapped, handshakes and writes recognised.
#include "docguard/proxy/replay_request.h"

#include <gtest/gtest.h>

#include "test_messages.h"

namespace docguard::proxy {
namespace {

using testing::json;

// The rewritten command as canonical JSON, for comparison with what is expected.
std::string text_of(const ReplayRequest& r) { return codec::to_json(r.command.view()); }

TEST(ReplayRequest, DocumentSequenceBecomesTheBodysArray) {
  auto msg = testing::request(R"({"insert": "c", "ordered": true, "$db": "shop"})", "documents",
                              {R"({"_id": 1})", R"({"_id": 2})"});
  SessionMap sessions;
  CursorMap cursors;
  const ReplayRequest r = rewrite_request(msg->bytes, sessions, cursors);
  ASSERT_EQ(r.action, RequestAction::kSend);
  EXPECT_EQ(r.name, "insert");
  EXPECT_EQ(r.database, "shop");
  EXPECT_TRUE(r.is_write);
  bson_iter_t it;
  bson_iter_t docs;
  ASSERT_TRUE(bson_iter_init_find(&it, r.command.get(), "documents"));
  ASSERT_TRUE(BSON_ITER_HOLDS_ARRAY(&it));
  ASSERT_TRUE(bson_iter_recurse(&it, &docs));
  int n = 0;
  while (bson_iter_next(&docs)) ++n;
  EXPECT_EQ(n, 2);
  EXPECT_FALSE(bson_has_field(r.command.get(), "$db"));
  // The command name stays first: the server reads the command from the first key.
  ASSERT_TRUE(bson_iter_init(&it, r.command.get()) && bson_iter_next(&it));
  EXPECT_STREQ(bson_iter_key(&it), "insert");
}

TEST(ReplayRequest, ClusterTimeAndReadPreferenceAreStripped) {
  auto msg = testing::request(
      R"({"find": "c", "filter": {"a": 1}, "$db": "shop",
          "$clusterTime": {"clusterTime": {"$timestamp": {"t": 1, "i": 1}}, "signature": {}},
          "$readPreference": {"mode": "secondaryPreferred"}})");
  SessionMap sessions;
  CursorMap cursors;
  const ReplayRequest r = rewrite_request(msg->bytes, sessions, cursors);
  EXPECT_FALSE(bson_has_field(r.command.get(), "$clusterTime"));
  EXPECT_FALSE(bson_has_field(r.command.get(), "$readPreference"));
  EXPECT_EQ(r.read_preference, "secondaryPreferred");
  EXPECT_FALSE(r.is_write);
  EXPECT_EQ(text_of(r), R"({ "find" : "c", "filter" : { "a" : 1 } })");
}

TEST(ReplayRequest, EachRecordedLsidGetsOneFreshSessionId) {
  const char* a = R"({"update": "c", "updates": [], "txnNumber": 3,
      "lsid": {"id": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}},
      "$db": "d"})";
  const char* b = R"({"find": "c",
      "lsid": {"id": {"$binary": {"base64": "AQEBAQEBAQEBAQEBAQEBAQ==", "subType": "04"}}},
      "$db": "d"})";
  SessionMap sessions;
  CursorMap cursors;
  auto first = rewrite_request(testing::request(a)->bytes, sessions, cursors);
  auto again = rewrite_request(testing::request(a)->bytes, sessions, cursors);
  auto other = rewrite_request(testing::request(b)->bytes, sessions, cursors);
  // The lsid leaves the body: the replay runs the command in a session of its own.
  EXPECT_FALSE(bson_has_field(first.command.get(), "lsid"));
  const auto lsid_of = [](const ReplayRequest& r) { return codec::to_json(r.lsid); };
  EXPECT_EQ(lsid_of(first), lsid_of(again));
  EXPECT_NE(lsid_of(first), lsid_of(other));
  EXPECT_EQ(lsid_of(first).find("AAAAAAAAAAAAAAAAAAAAAA=="), std::string::npos);
  EXPECT_EQ(sessions.size(), 2U);
  // The retryable write keeps its txnNumber: the session is new, its sequence is the recorded one.
  bson_iter_t txn;
  ASSERT_TRUE(bson_iter_init_find(&txn, first.command.get(), "txnNumber"));
  EXPECT_EQ(bson_iter_as_int64(&txn), 3);
}

TEST(ReplayRequest, CursorIdsOfGetMoreAndKillCursorsAreRemapped) {
  SessionMap sessions;
  CursorMap cursors;
  cursors.put(111, {999, 4});
  auto get_more = rewrite_request(
      testing::request(R"({"getMore": {"$numberLong": "111"}, "collection": "c", "$db": "d"})")
          ->bytes,
      sessions, cursors);
  EXPECT_EQ(get_more.recorded_cursor, 111);
  EXPECT_EQ(get_more.server_id, 4U);
  EXPECT_FALSE(get_more.is_write);
  bson_iter_t it;
  ASSERT_TRUE(bson_iter_init_find(&it, get_more.command.get(), "getMore"));
  EXPECT_EQ(bson_iter_as_int64(&it), 999);

  auto kill = rewrite_request(
      testing::request(R"({"killCursors": "c", "cursors": [{"$numberLong": "111"}], "$db": "d"})")
          ->bytes,
      sessions, cursors);
  EXPECT_EQ(text_of(kill), R"({ "killCursors" : "c", "cursors" : [ 999 ] })");
  // A cursor the replay never opened keeps its id: the server answers CursorNotFound, a
  // difference the report shows.
  auto unknown = rewrite_request(
      testing::request(R"({"getMore": {"$numberLong": "5"}, "collection": "c", "$db": "d"})")
          ->bytes,
      sessions, cursors);
  ASSERT_TRUE(bson_iter_init_find(&it, unknown.command.get(), "getMore"));
  EXPECT_EQ(bson_iter_as_int64(&it), 5);
}

TEST(ReplayRequest, HandshakesAndMarkersAreNotReplayed) {
  SessionMap sessions;
  CursorMap cursors;
  for (const char* body : {R"({"hello": 1, "$db": "admin"})", R"({"isMaster": 1, "$db": "admin"})",
                           R"({"saslStart": 1, "payload": "x", "$db": "admin"})",
                           R"({"$docguardUnrecorded": "legacy opcode"})"}) {
    EXPECT_EQ(rewrite_request(testing::request(body)->bytes, sessions, cursors).action,
              RequestAction::kHandshake)
        << body;
  }
  const std::vector<uint8_t> garbage(20, 0);
  EXPECT_EQ(rewrite_request(garbage, sessions, cursors).action, RequestAction::kUnsupported);
}

TEST(ReplayRequest, WritesAreTold) {
  auto agg = json(R"({"aggregate": "c", "pipeline": [{"$match": {}}]})");
  auto agg_out = json(R"({"aggregate": "c", "pipeline": [{"$out": "d"}]})");
  EXPECT_TRUE(is_read_command("aggregate", testing::view(agg)));
  EXPECT_FALSE(is_read_command("aggregate", testing::view(agg_out)));
  for (const char* write : {"insert", "update", "delete", "findAndModify", "create", "drop",
                            "createIndexes", "dropDatabase"}) {
    EXPECT_FALSE(is_read_command(write, {})) << write;
  }
  EXPECT_TRUE(is_read_command("find", {}));
  EXPECT_TRUE(is_read_command("getMore", {}));
}

}  // namespace
}  // namespace docguard::proxy
