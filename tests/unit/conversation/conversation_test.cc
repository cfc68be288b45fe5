// Replays recorded driver traffic (tests/fixtures) through one Conversation, without sockets:
// what is forwarded, what is answered, what is dropped, and how replies are rewritten.
#include "docguard/conversation/conversation.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstring>
#include <filesystem>

#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"
#include "docguard/rules/rule_set.h"
#include "test_messages.h"

namespace docguard::conversation {
namespace {

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
      : engine(rules::parse_rules(YAML::Load(rules_yaml), "test.yaml"), nullptr) {
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
  EXPECT_EQ(codec::read_header(out.bytes.data()).op_code,
            static_cast<int32_t>(codec::OpCode::kMsg));
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

}  // namespace
}  // namespace docguard::conversation
