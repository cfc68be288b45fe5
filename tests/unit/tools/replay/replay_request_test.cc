// The replay's request rewrite: document sequences into the body's array, $clusterTime, $db
// and $readPreference out, lsids and cursor ids remapped, handshakes and writes recognised.
#include "docguard/tools/replay_request.h"

#include <gtest/gtest.h>

#include "test_messages.h"

namespace docguard::tools {
namespace {

using testing::json;

// The rewritten command as canonical JSON, for comparison with what is expected.
std::string text_of(const ReplayRequest& r) { return codec::to_json(r.command.view()); }

TEST(ReplayRequest, DocumentSequenceBecomesTheBodysArray) {
  auto msg = testing::request(R"({"insert": "c", "ordered": true, "$db": "shop"})", "documents",
                              {R"({"_id": 1})", R"({"_id": 2})"});
  CursorMap cursors;
  const ReplayRequest r = rewrite_request(msg->bytes, cursors);
  ASSERT_EQ(r.action, RequestAction::kSend);
  EXPECT_EQ(r.name, "insert");
  EXPECT_EQ(r.database, "shop");
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
  CursorMap cursors;
  const ReplayRequest r = rewrite_request(msg->bytes, cursors);
  EXPECT_FALSE(bson_has_field(r.command.get(), "$clusterTime"));
  EXPECT_FALSE(bson_has_field(r.command.get(), "$readPreference"));
  EXPECT_EQ(r.read_preference, "secondaryPreferred");
  EXPECT_EQ(text_of(r), R"({ "find" : "c", "filter" : { "a" : 1 } })");
}

TEST(ReplayRequest, TheLsidLeavesTheBodyAndTheTxnNumberStays) {
  const char* a = R"({"update": "c", "updates": [], "txnNumber": 3,
      "lsid": {"id": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}},
      "$db": "d"})";
  CursorMap cursors;
  auto message = testing::request(a);
  auto first = rewrite_request(message->bytes, cursors);
  // The replay runs the command in the live session of the recorded lsid (replay_clients.h).
  EXPECT_FALSE(bson_has_field(first.command.get(), "lsid"));
  EXPECT_NE(codec::to_json(first.lsid).find("AAAAAAAAAAAAAAAAAAAAAA=="), std::string::npos);
  // The retryable write keeps its txnNumber: the session is new, its sequence is the recorded one.
  bson_iter_t txn;
  ASSERT_TRUE(bson_iter_init_find(&txn, first.command.get(), "txnNumber"));
  EXPECT_EQ(bson_iter_as_int64(&txn), 3);
}

TEST(ReplayRequest, StatementsDocguardRefusedAreNotSent) {
  CursorMap cursors;
  auto msg = testing::request(R"({"insert": "c", "ordered": false, "$db": "shop"})", "documents",
                              {R"({"_id": 1})", R"({"_id": 2})", R"({"_id": 3})"});
  const std::vector<int32_t> refused = {1};
  const ReplayRequest unordered = rewrite_request(msg->bytes, cursors, refused);
  EXPECT_EQ(
      text_of(unordered),
      R"({ "insert" : "c", "ordered" : false, "documents" : [ { "_id" : 1 }, { "_id" : 3 } ] })");
  // An ordered batch stopped at the first refused statement: only those before it went on.
  auto ordered_msg = testing::request(R"({"insert": "c", "$db": "shop"})", "documents",
                                      {R"({"_id": 1})", R"({"_id": 2})", R"({"_id": 3})"});
  EXPECT_EQ(text_of(rewrite_request(ordered_msg->bytes, cursors, refused)),
            R"({ "insert" : "c", "documents" : [ { "_id" : 1 } ] })");
  const std::vector<int32_t> first = {0};
  EXPECT_EQ(rewrite_request(ordered_msg->bytes, cursors, first).action, RequestAction::kEmpty);
}

TEST(ReplayRequest, CursorIdsOfGetMoreAndKillCursorsAreRemapped) {
  CursorMap cursors;
  cursors.put(111, {999, 4});
  auto get_more = rewrite_request(
      testing::request(R"({"getMore": {"$numberLong": "111"}, "collection": "c", "$db": "d"})")
          ->bytes,
      cursors);
  EXPECT_EQ(get_more.recorded_cursor, 111);
  EXPECT_EQ(get_more.server_id, 4U);
  bson_iter_t it;
  ASSERT_TRUE(bson_iter_init_find(&it, get_more.command.get(), "getMore"));
  EXPECT_EQ(bson_iter_as_int64(&it), 999);

  auto kill = rewrite_request(
      testing::request(R"({"killCursors": "c", "cursors": [{"$numberLong": "111"}], "$db": "d"})")
          ->bytes,
      cursors);
  EXPECT_EQ(text_of(kill), R"({ "killCursors" : "c", "cursors" : [ 999 ] })");
  // A cursor the replay never opened keeps its id: the server answers CursorNotFound, a
  // difference the report shows.
  auto unknown = rewrite_request(
      testing::request(R"({"getMore": {"$numberLong": "5"}, "collection": "c", "$db": "d"})")
          ->bytes,
      cursors);
  ASSERT_TRUE(bson_iter_init_find(&it, unknown.command.get(), "getMore"));
  EXPECT_EQ(bson_iter_as_int64(&it), 5);
}

TEST(ReplayRequest, HandshakesAndMarkersAreNotReplayed) {
  CursorMap cursors;
  for (const char* body : {R"({"hello": 1, "$db": "admin"})", R"({"isMaster": 1, "$db": "admin"})",
                           R"({"saslStart": 1, "payload": "x", "$db": "admin"})",
                           R"({"$docguardUnrecorded": "legacy opcode"})"}) {
    EXPECT_EQ(rewrite_request(testing::request(body)->bytes, cursors).action,
              RequestAction::kHandshake)
        << body;
  }
  const std::vector<uint8_t> garbage(20, 0);
  EXPECT_EQ(rewrite_request(garbage, cursors).action, RequestAction::kUnsupported);
}

TEST(ReplayRequest, TheSecretCheckRunsOnWhatIsSentAndLegacyIsNeverSent) {
  CursorMap cursors;
  // Sequences folded into the body: the users collection is in what goes out.
  const auto users = testing::request(R"({"insert": "system.users", "$db": "admin"})", "documents",
                                      {R"({"_id": "admin.evil", "user": "evil"})"});
  EXPECT_EQ(rewrite_request(users->bytes, cursors).action, RequestAction::kSecretNamespace);
  const auto no_db = testing::request(R"({"delete": "items", "deletes": []})");
  EXPECT_EQ(rewrite_request(no_db->bytes, cursors).action, RequestAction::kUnsupported);
  const auto ok = testing::request(R"({"find": "items", "$db": "shop", "$db": "shop"})");
  const ReplayRequest find = rewrite_request(ok->bytes, cursors);
  EXPECT_EQ(find.action, RequestAction::kSend);
  EXPECT_EQ(find.database, "shop");
}

}  // namespace
}  // namespace docguard::tools
