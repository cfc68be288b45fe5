// The guardrail's max_time_ms: added to the forwarded command when it carries none, never to one
// that does; the message stays a valid OP_MSG (length, no stale checksum, sequences kept).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "docguard/codec/op_msg.h"
#include "docguard/conversation/conversation.h"
#include "docguard/rules/rule_set.h"
#include "docguard/settings/yaml_settings.h"
#include "test_messages.h"

namespace docguard::conversation {
namespace {
namespace DOCGUARD_UNITY_ID {

using Action = Conversation::RequestOutcome::Action;

struct Host : ConversationHost {
  int32_t new_request_id() override { return -1; }
  void on_blocked() override {}
  void on_unacknowledged_reply_dropped(int32_t) override {}
};

constexpr const char* kRules = R"(
rules:
  - match: "shop.*"
    apps: ["batch-*"]
    max_time_ms: 2000
  - match: "shop.writes"
    max_time_ms: 500
    max_time_ms_writes: true
  - match: "shop.capped"
    max_document_bytes: 100
    action: block
    max_time_ms: 500
    max_time_ms_writes: true
)";

struct TimeLimit : ::testing::Test {
  TimeLimit() : engine(settings::parse_rules(YAML::Load(kRules), "test.yaml"), nullptr, nullptr) {}
  testing::Bson forwarded(const std::vector<uint8_t>& request, std::string app = "batch-7") {
    Conversation conv{engine, settings, "127.0.0.1:5", host};
    const auto hello = testing::op_msg(
        ("{\"hello\": 1, \"$db\": \"admin\", \"client\": {\"application\": {\"name\": \"" + app +
         "\"}}}")
            .c_str(),
        1);
    conv.on_request(hello);
    const auto out = conv.on_request(request);
    EXPECT_EQ(out.action, Action::kForward);
    bytes.assign(out.bytes.begin(), out.bytes.end());
    const auto msg = codec::OpMsg::parse(bytes);
    EXPECT_EQ(static_cast<size_t>(msg.header.message_length), bytes.size());
    EXPECT_FALSE(msg.checksum_present);
    sequences = msg.sequences.size();
    return testing::Bson(msg.body);
  }
  rules::Engine engine;
  ConversationSettings settings;
  Host host;
  std::vector<uint8_t> bytes;
  size_t sequences = 0;
};

TEST_F(TimeLimit, AddedToReadsOfScopedAppsWithoutOne) {
  const auto find = testing::op_msg(R"({"find": "orders", "$db": "shop", "filter": {"a": 1}})", 2);
  EXPECT_NE(forwarded(find).json().find(R"("maxTimeMS" : 2000)"), std::string::npos);
  EXPECT_EQ(forwarded(find, "web").json().find("maxTimeMS"), std::string::npos);
  const auto own = testing::op_msg(
      R"({"find": "orders", "$db": "shop", "filter": {"a": 1}, "maxTimeMS": 50})", 3);
  const auto kept = forwarded(own);
  EXPECT_EQ(bytes, own);  // the client's own limit: its bytes, untouched
  EXPECT_NE(kept.json().find(R"("maxTimeMS" : 50)"), std::string::npos);
}

TEST_F(TimeLimit, WritesOnlyWhenTheRuleSaysSo) {
  auto insert = testing::request(R"({"insert": "writes", "$db": "shop"})", "documents",
                                 {R"({"_id": 1})", R"({"_id": 2})"});
  const auto body = forwarded(insert->bytes, "web");
  EXPECT_NE(body.json().find(R"("maxTimeMS" : 500)"), std::string::npos) << body.json();
  EXPECT_EQ(sequences, 1u);  // the documents' sequence is kept
  auto other =
      testing::request(R"({"insert": "orders", "$db": "shop"})", "documents", {R"({"_id": 1})"});
  EXPECT_EQ(forwarded(other->bytes).json().find("maxTimeMS"), std::string::npos);
}

TEST_F(TimeLimit, APartlyRefusedBatchForwardsItsOtherStatementsWithTheLimit) {
  const std::string big(200, 'x');
  auto insert = testing::request(
      R"({"insert": "capped", "$db": "shop", "ordered": false})", "documents",
      {R"({"_id": 1})", R"({"_id": 2, "pad": ")" + big + R"("})", R"({"_id": 3})"});
  const auto body = forwarded(insert->bytes, "web");
  EXPECT_NE(body.json().find(R"("maxTimeMS" : 500)"), std::string::npos) << body.json();
  const auto msg = codec::OpMsg::parse(bytes);
  ASSERT_EQ(msg.sequences.size(), 1u);
  EXPECT_EQ(msg.sequences[0].documents.size(), 2u);  // the refused document is not forwarded
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::conversation
