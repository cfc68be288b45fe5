// Replays recorded driver traffic (tests/fixtures) through one Conversation, without sockets:
// what is forwarded, what is answered, what is dropped, and how replies are rewritten.
#include "docguard/conversation/conversation.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"
#include "docguard/rules/rule_set.h"
#include "docguard/settings/yaml_settings.h"
#include "test_messages.h"

namespace docguard::conversation {
namespace {
namespace DOCGUARD_UNITY_ID {

using Action = Conversation::RequestOutcome::Action;

std::vector<uint8_t> fixture(const std::string& name) {
  return testing::read_hex(std::filesystem::path(DOCGUARD_FIXTURES) / name);
}

// A recorded reply made the answer to `request_id`.
std::vector<uint8_t> reply_to(std::vector<uint8_t> reply, int32_t request_id) {
  std::memcpy(reply.data() + 8, &request_id, 4);
  return reply;
}

struct Host : ConversationHost {
  int32_t new_request_id() override { return next--; }
  void on_blocked() override { ++blocked; }
  void on_unacknowledged_reply_dropped(int32_t) override { ++dropped; }
  int32_t next = -1;
  int blocked = 0;
  int dropped = 0;
};

struct Replay : ::testing::Test {
  explicit Replay(const char* rules_yaml = "mode: warn\n")
      : engine(settings::parse_rules(YAML::Load(rules_yaml), "test.yaml"), nullptr, nullptr) {
    settings.persona.persona = Persona::kMongos;
    settings.persona.advertised_address = "docguard:27017";
  }
  rules::Engine engine;
  ConversationSettings settings;
  Host host;
  Conversation conv{engine, settings, "127.0.0.1:5", host};
};

TEST_F(Replay, HelloOverOpMsgGetsTheMongosPersona) {
  const auto hello = fixture("pymongo_hello_op_msg.hex");
  const auto out = conv.on_request(hello);
  ASSERT_EQ(out.action, Action::kForward);
  EXPECT_TRUE(std::equal(out.bytes.begin(), out.bytes.end(), hello.begin(), hello.end()));
  EXPECT_EQ(conv.outstanding(), 1);

  const int32_t id = codec::read_header(hello.data()).request_id;
  const auto upstream = reply_to(fixture("docguard_hello_reply_op_msg.hex"), id);
  const auto reply = conv.on_reply(upstream);
  ASSERT_FALSE(reply.drop);
  const auto msg = codec::OpMsg::parse(reply.bytes);
  EXPECT_EQ(msg.header.response_to, id);
  testing::Bson body(msg.body);
  EXPECT_NE(body.json().find("\"isdbgrid\""), std::string::npos) << body.json();
  EXPECT_EQ(body.json().find("\"hosts\""), std::string::npos) << body.json();
  EXPECT_EQ(conv.outstanding(), 0);
}

TEST_F(Replay, LegacyHelloOverOpQueryIsAnsweredWithOpReply) {
  const auto hello = fixture("node_hello_op_query.hex");
  ASSERT_EQ(conv.on_request(hello).action, Action::kForward);
  const int32_t id = codec::read_header(hello.data()).request_id;
  const auto reply = conv.on_reply(reply_to(fixture("docguard_hello_reply_op_reply.hex"), id));
  ASSERT_FALSE(reply.drop);
  const auto op_reply = codec::OpReply::parse(reply.bytes);
  ASSERT_EQ(op_reply.documents.size(), 1u);
  EXPECT_NE(testing::Bson(op_reply.documents[0]).json().find("isdbgrid"), std::string::npos);
}

TEST_F(Replay, CompressedRequestGoesUpstreamDecompressedWhenTheUpstreamDidNotAgree) {
  const auto insert = fixture("pymongo_insert_many_zstd.hex");
  const auto out = conv.on_request(insert);
  ASSERT_EQ(out.action, Action::kForward);
  EXPECT_EQ(codec::read_header(out.bytes.data()).op_code, codec::OpCode::kMsg);
}

TEST_F(Replay, RecordedWritesAndReadsPassUntouchedInWarnMode) {
  for (const char* name : {"node_insert_many_op_msg.hex", "node_update_push_op_msg.hex"}) {
    SCOPED_TRACE(name);
    const auto request = fixture(name);
    const auto out = conv.on_request(request);
    ASSERT_EQ(out.action, Action::kForward);
    EXPECT_TRUE(std::equal(out.bytes.begin(), out.bytes.end(), request.begin(), request.end()));
  }
  EXPECT_EQ(host.blocked, 0);
}

struct Blocking : Replay {
  Blocking() : Replay("mode: block\nrules:\n  - match: \"*\"\n    max_array_length: 3\n") {}
};

TEST_F(Blocking, RefusedInsertIsAnsweredWithoutTheUpstream) {
  const auto request = testing::request(R"({"insert": "c", "$db": "d", "ordered": true})",
                                        "documents", {R"({"_id": 1, "a": [1, 2, 3, 4]})"});
  const auto out = conv.on_request(request->bytes);
  ASSERT_EQ(out.action, Action::kReply);
  const auto reply = codec::OpMsg::parse(out.bytes);
  EXPECT_EQ(reply.header.response_to, request->msg.header.request_id);
  EXPECT_NE(testing::Bson(reply.body).json().find("121"), std::string::npos);
  EXPECT_EQ(host.blocked, 1);
  EXPECT_EQ(conv.outstanding(), 0);
}

TEST_F(Blocking, TheRefusedRequestsRuleIsKeptUntilTheBufferIsReleased) {
  const auto request = testing::request(R"({"insert": "c", "$db": "d", "ordered": true})",
                                        "documents", {R"({"_id": 1, "a": [1, 2, 3, 4]})"});
  ASSERT_EQ(conv.on_request(request->bytes).action, Action::kReply);
  EXPECT_EQ(conv.request_rule(), "max_array_length");
  ASSERT_EQ(conv.request_violations().size(), 1u);
  EXPECT_EQ(conv.request_violations()[0].action, rules::Action::kBlock);
  conv.release_request_buffer();
  EXPECT_EQ(conv.request_rule(), "");
  const auto fine =
      testing::request(R"({"insert": "c", "$db": "d"})", "documents", {R"({"_id": 2, "a": [1]})"});
  ASSERT_EQ(conv.on_request(fine->bytes).action, Action::kForward);
  EXPECT_TRUE(conv.request_violations().empty());
}

struct UserScoped : Replay {
  UserScoped()
      : Replay(
            "mode: block\nrules:\n  - match: \"*\"\n    users: [\"api@admin\"]\n"
            "    max_array_length: 3\n") {}
};

TEST_F(UserScoped, ARecordedUserPicksTheUsersRules) {
  const auto request = testing::request(R"({"insert": "c", "$db": "d", "ordered": true})",
                                        "documents", {R"({"_id": 1, "a": [1, 2, 3, 4]})"});
  EXPECT_EQ(conv.on_request(request->bytes).action, Action::kForward);
  conv.adopt_recorded_identity("billing", "api@admin");
  EXPECT_EQ(conv.user(), "api@admin");
  EXPECT_EQ(conv.app_name(), "billing");
  EXPECT_EQ(conv.on_request(request->bytes).action, Action::kReply);
  conv.adopt_recorded_identity("other", "");
  EXPECT_EQ(conv.app_name(), "billing");  // the first app stays, as a hello's does
  EXPECT_EQ(conv.on_request(request->bytes).action, Action::kForward);
}

TEST_F(Replay, ReplyToAnUnacknowledgedRequestNeverReachesTheClient) {
  const auto request = testing::request(R"({"insert": "c", "$db": "d"})", "documents",
                                        {R"({"_id": 1})"}, codec::op_msg_flags::kMoreToCome, 77);
  ASSERT_EQ(conv.on_request(request->bytes).action, Action::kForward);
  EXPECT_EQ(conv.outstanding(), 0);
  const auto stray = testing::op_msg(R"({"ok": 1})");
  const auto reply = conv.on_reply(reply_to(stray, 77));
  EXPECT_TRUE(reply.drop);
  EXPECT_EQ(host.dropped, 1);
}

// Replies to w:0 writes (FerretDB answers them) must never reach the client, however many the
// client sends before its next acknowledged request.
TEST_F(Replay, RepliesToAnyNumberOfUnacknowledgedRequestsAreDropped) {
  constexpr int kWrites = 500;
  for (int i = 0; i < kWrites; ++i) {
    const auto w0 = testing::request(R"({"insert": "c", "$db": "d"})", "documents", {R"({"x": 1})"},
                                     codec::op_msg_flags::kMoreToCome, 1000 + i);
    ASSERT_EQ(conv.on_request(w0->bytes).action, Action::kForward);
  }
  EXPECT_EQ(conv.outstanding(), 0);
  const auto find = testing::request(R"({"find": "c", "$db": "d"})", {}, {}, 0, 5000);
  ASSERT_EQ(conv.on_request(find->bytes).action, Action::kForward);
  EXPECT_EQ(conv.outstanding(), 1);
  // The upstream answers every write (in order), then the find.
  for (int i = 0; i < kWrites; ++i) {
    EXPECT_TRUE(conv.on_reply(reply_to(testing::op_msg(R"({"ok": 1})", 9000 + i), 1000 + i)).drop);
  }
  const auto found = reply_to(testing::op_msg(R"({"cursor": {"id": 0}, "ok": 1})", 9999), 5000);
  const auto out = conv.on_reply(found);
  ASSERT_FALSE(out.drop);
  EXPECT_EQ(codec::read_header(out.bytes.data()).response_to, 5000);
  EXPECT_EQ(host.dropped, kWrites);
  EXPECT_EQ(conv.outstanding(), 0);
  // A late answer to an old write is still not the client's.
  EXPECT_TRUE(conv.on_reply(reply_to(testing::op_msg(R"({"ok": 1})", 10000), 1001)).drop);
}

// An exhaust stream: the first reply answers the request, each follow-up answers the previous
// reply. All of it reaches the client, and the connection counts as busy until the last one.
TEST_F(Replay, ExhaustStreamRepliesAllReachTheClient) {
  const auto get_more =
      testing::request(R"({"getMore": {"$numberLong": "7"}, "collection": "c", "$db": "d"})", {},
                       {}, codec::op_msg_flags::kExhaustAllowed, 20);
  ASSERT_EQ(conv.on_request(get_more->bytes).action, Action::kForward);
  const uint32_t more = codec::op_msg_flags::kMoreToCome;
  EXPECT_FALSE(conv.on_reply(reply_to(testing::op_msg(R"({"ok": 1})", 500, more), 20)).drop);
  EXPECT_EQ(conv.outstanding(), 1);
  EXPECT_FALSE(conv.on_reply(reply_to(testing::op_msg(R"({"ok": 1})", 501, more), 500)).drop);
  EXPECT_EQ(conv.outstanding(), 1);
  EXPECT_FALSE(conv.on_reply(reply_to(testing::op_msg(R"({"ok": 1})", 502), 501)).drop);
  EXPECT_EQ(conv.outstanding(), 0);
  EXPECT_EQ(host.dropped, 0);
  // After the stream ended, a reply nobody asked for is dropped again.
  EXPECT_TRUE(conv.on_reply(reply_to(testing::op_msg(R"({"ok": 1})", 503), 21)).drop);
}

// OP_COMPRESSED (noop compressor) wrapping `inner`, an OP_MSG, with the given ids.
std::vector<uint8_t> noop_compressed(const std::vector<uint8_t>& inner, int32_t request_id,
                                     int32_t response_to) {
  const size_t body = inner.size() - codec::kHeaderSize;
  std::vector<uint8_t> compressed(codec::kHeaderSize + 9 + body);
  codec::store_le32(compressed.data() + 4, request_id);
  codec::store_le32(compressed.data() + 8, response_to);
  codec::store_le32(compressed.data() + 12, static_cast<int32_t>(codec::OpCode::kCompressed));
  codec::store_le32(compressed.data() + 16, static_cast<int32_t>(codec::OpCode::kMsg));
  codec::store_le32(compressed.data() + 20,
                    static_cast<int32_t>(inner.size() - codec::kHeaderSize));
  compressed[24] = 0;  // noop
  std::copy(inner.begin() + codec::kHeaderSize, inner.end(), compressed.begin() + 25);
  codec::store_le32(compressed.data(), static_cast<int32_t>(compressed.size()));
  return compressed;
}

// A compressed follow-up (its flags read once it is decompressed) is also recognised by its
// responseTo naming the previous reply.
TEST_F(Replay, CompressedExhaustFollowUpReachesTheClient) {
  const auto get_more =
      testing::request(R"({"getMore": {"$numberLong": "7"}, "collection": "c", "$db": "d"})", {},
                       {}, codec::op_msg_flags::kExhaustAllowed, 30);
  ASSERT_EQ(conv.on_request(get_more->bytes).action, Action::kForward);
  EXPECT_FALSE(conv.on_reply(reply_to(testing::op_msg(R"({"ok": 1})", 600), 30)).drop);
  // OP_COMPRESSED (noop compressor) wrapping an OP_MSG that answers reply 600.
  auto compressed = noop_compressed(testing::op_msg(R"({"ok": 1})", 601), 601, 600);
  EXPECT_FALSE(conv.on_reply(compressed).drop);
  // A compressed answer to a w:0 write is dropped like a plain one.
  codec::store_le32(compressed.data() + 4, 602);
  codec::store_le32(compressed.data() + 8, 31);
  EXPECT_TRUE(conv.on_reply(compressed).drop);
}

// Whether a reply continues an exhaust stream is read from the plain message's flags. It was
// once read from the compressed bytes (where the original opcode sits, not the flags), so a
// compressed stream was known only by its responseTo chain and the connection looked idle
// between its replies.
TEST_F(Replay, CompressedExhaustReplyKeepsTheStreamOpen) {
  const auto get_more =
      testing::request(R"({"getMore": {"$numberLong": "7"}, "collection": "c", "$db": "d"})", {},
                       {}, codec::op_msg_flags::kExhaustAllowed, 50);
  ASSERT_EQ(conv.on_request(get_more->bytes).action, Action::kForward);
  const uint32_t more = codec::op_msg_flags::kMoreToCome;
  const auto first = noop_compressed(testing::op_msg(R"({"ok": 1})", 900, more), 900, 50);
  EXPECT_FALSE(conv.on_reply(first).drop);
  EXPECT_EQ(conv.outstanding(), 1);  // a follow-up comes next
  const auto second = noop_compressed(testing::op_msg(R"({"ok": 1})", 901, more), 901, 900);
  EXPECT_FALSE(conv.on_reply(second).drop);
  EXPECT_EQ(conv.outstanding(), 1);
  const auto last = noop_compressed(testing::op_msg(R"({"ok": 1})", 902), 902, 901);
  EXPECT_FALSE(conv.on_reply(last).drop);
  EXPECT_EQ(conv.outstanding(), 0);
  EXPECT_EQ(host.dropped, 0);
}

// A stray reply that itself says moreToCome does not open a stream that would let the next
// stray reply through.
TEST_F(Replay, DroppedReplyWithMoreToComeOpensNoStream) {
  const auto w0 = testing::request(R"({"insert": "c", "$db": "d"})", "documents", {R"({"x": 1})"},
                                   codec::op_msg_flags::kMoreToCome, 40);
  conv.on_request(w0->bytes);
  const uint32_t more = codec::op_msg_flags::kMoreToCome;
  EXPECT_TRUE(conv.on_reply(reply_to(testing::op_msg(R"({"ok": 1})", 700, more), 40)).drop);
  EXPECT_TRUE(conv.on_reply(reply_to(testing::op_msg(R"({"ok": 1})", 701), 40)).drop);
  EXPECT_EQ(conv.outstanding(), 0);
}

// Legacy replies are never dropped (OP_QUERY exhaust follow-ups repeat the request's id).
TEST_F(Replay, LegacyReplyIsPassedOn) {
  const auto doc = testing::json(R"({"ok": 1})");
  const auto reply = codec::build_op_reply(800, 12345, testing::view(doc).bytes(), 0);
  EXPECT_FALSE(conv.on_reply(reply).drop);
  EXPECT_EQ(host.dropped, 0);
}

// A client pipelining without bound is refused rather than remembered without limit.
TEST_F(Replay, TooManyRequestsAwaitingRepliesIsAProtocolError) {
  for (size_t i = 0; i < Conversation::kMaxAwaitingReplies; ++i) {
    const auto ping = testing::op_msg(R"({"ping": 1, "$db": "admin"})", static_cast<int32_t>(i));
    ASSERT_EQ(conv.on_request(ping).action, Action::kForward);
  }
  EXPECT_EQ(conv.outstanding(), static_cast<int64_t>(Conversation::kMaxAwaitingReplies));
  const auto one_more = testing::op_msg(R"({"ping": 1, "$db": "admin"})", 99999);
  EXPECT_THROW(conv.on_request(one_more), codec::ProtocolError);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::conversation
