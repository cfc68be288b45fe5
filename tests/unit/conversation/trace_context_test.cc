// A request with a trace context (OP_MSG section kind 3) is judged like the same request without
// one: forwarded as the client's bytes, rebuilt with its trace context kept (a time limit added,
// a partly refused batch), refused with the same reply; its traceparent is kept, bounded, for
// the request's log line.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "docguard/base/bounded_text.h"
#include "docguard/codec/op_msg.h"
#include "docguard/conversation/conversation.h"
#include "docguard/settings/yaml_settings.h"
#include "test_messages.h"

namespace docguard::conversation {
namespace {
namespace DOCGUARD_UNITY_ID {

using Action = Conversation::RequestOutcome::Action;

struct Host : ConversationHost {
  int32_t new_request_id() override { return 77; }
  void on_blocked() override {}
  void on_unacknowledged_reply_dropped(int32_t) override {}
};

constexpr const char* kRules = R"(
rules:
  - match: "shop.orders"
    apps: ["batch-*"]
    max_time_ms: 2000
  - match: "shop.capped"
    max_document_bytes: 100
    action: block
)";

constexpr const char* kTraceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

std::string trace_json(std::string_view traceparent = kTraceparent) {
  return R"({"otel": {"traceparent": ")" + std::string(traceparent) + R"("}})";
}

// The message of `body` and optional kind-1 documents, with or without a trace context.
std::vector<uint8_t> request(std::string_view body, const std::vector<std::string>& documents,
                             bool traced, std::string_view traceparent = kTraceparent) {
  testing::Bson b(body);
  testing::Bson trace(trace_json(traceparent));
  std::vector<std::unique_ptr<testing::Bson>> owned;
  std::vector<codec::BsonView> views;
  for (const auto& d : documents) {
    owned.push_back(std::make_unique<testing::Bson>(d));
    views.push_back(owned.back()->view());
  }
  codec::OpMsgBuilder builder(5, 0);
  builder.body(b.get());
  if (!documents.empty()) builder.sequence("documents", views);
  if (traced) builder.trace_context(trace.view());
  return builder.finish();
}

struct TraceContext : ::testing::Test {
  TraceContext()
      : engine(settings::parse_rules(YAML::Load(kRules), "test.yaml"), nullptr, nullptr) {}
  // What docguard does with `message` on a fresh connection of `app`, after a hello answered
  // by an upstream of `wire_version` (none: no reply yet).
  std::pair<Action, std::vector<uint8_t>> handle(const std::vector<uint8_t>& message,
                                                 const std::string& app = "web",
                                                 int wire_version = 0) {
    conv = std::make_unique<Conversation>(engine, settings, "127.0.0.1:5", host);
    conv->on_request(testing::op_msg(
        ("{\"hello\": 1, \"$db\": \"admin\", \"client\": {\"application\": {\"name\": \"" + app +
         "\"}}}")
            .c_str(),
        1));
    if (wire_version > 0) {
      const auto reply =
          codec::OpMsgBuilder(2, 1)
              .body(testing::Bson(R"({"isWritablePrimary": true, "maxWireVersion": )" +
                                  std::to_string(wire_version) + R"(, "ok": 1})")
                        .get())
              .finish();
      conv->on_reply(reply);
    }
    const auto out = conv->on_request(message);
    return {out.action, std::vector<uint8_t>(out.bytes.begin(), out.bytes.end())};
  }
  rules::Engine engine;
  ConversationSettings settings;
  Host host;
  std::unique_ptr<Conversation> conv;
};

const char* kFind = R"({"find": "orders", "$db": "shop", "filter": {"a": 1}})";
const char* kInsert = R"({"insert": "capped", "$db": "shop", "ordered": false})";

TEST_F(TraceContext, ForwardedAsTheClientsBytes) {
  const auto message = request(kFind, {}, true);
  const auto [action, bytes] = handle(message);
  EXPECT_EQ(action, Action::kForward);
  EXPECT_EQ(bytes, message);
  EXPECT_EQ(conv->request_command(), "find");
  EXPECT_EQ(conv->request_traceparent(), kTraceparent);
}

// The request's name for its log line: as sent, whether it is a known command's usual name,
// another spelling of one, or a name docguard does not know (cut past kMaxLoggedBytes); and it
// outlives the request's bytes.
TEST_F(TraceContext, TheCommandsNameIsKeptAsSent) {
  const std::string long_name(Conversation::kMaxLoggedBytes + 50, 'q');
  for (const std::string& name :
       {std::string("find"), std::string("findandmodify"), std::string("ping"), long_name}) {
    {
      const auto message = request("{\"" + name + "\": \"c\", \"$db\": \"shop\"}", {}, false);
      handle(message);
    }  // the message's bytes are gone
    if (name.size() <= Conversation::kMaxLoggedBytes) {
      EXPECT_EQ(conv->request_command(), name);
    } else {
      EXPECT_LE(conv->request_command().size(), Conversation::kMaxLoggedBytes);
      EXPECT_EQ(conv->request_command().substr(0, 10), name.substr(0, 10));
    }
  }
}

TEST_F(TraceContext, KeptWhenATimeLimitIsAdded) {
  const auto [action, bytes] = handle(request(kFind, {}, true), "batch-1");
  ASSERT_EQ(action, Action::kForward);
  const auto msg = codec::OpMsg::parse(bytes);
  EXPECT_NE(testing::Bson(msg.body).json().find(R"("maxTimeMS" : 2000)"), std::string::npos);
  ASSERT_FALSE(msg.trace_context.empty());
  EXPECT_EQ(testing::Bson(msg.trace_context).json(), testing::Bson(trace_json()).json());
}

TEST_F(TraceContext, KeptWhenAPartlyRefusedBatchIsRewritten) {
  const std::string big(200, 'x');
  const std::vector<std::string> docs = {R"({"_id": 1})", R"({"_id": 2, "pad": ")" + big + "\"}",
                                         R"({"_id": 3})"};
  const auto [action, bytes] = handle(request(kInsert, docs, true));
  ASSERT_EQ(action, Action::kForward);
  const auto msg = codec::OpMsg::parse(bytes);
  ASSERT_EQ(msg.sequences.size(), 1u);
  EXPECT_EQ(msg.sequences[0].documents.size(), 2u);
  ASSERT_FALSE(msg.trace_context.empty());
  EXPECT_EQ(testing::Bson(msg.trace_context).json(), testing::Bson(trace_json()).json());
}

TEST_F(TraceContext, ARefusalIsTheSameAsWithoutIt) {
  const std::string big(200, 'x');
  const std::vector<std::string> docs = {R"({"_id": 2, "pad": ")" + big + "\"}"};
  const auto traced = handle(request(kInsert, docs, true));
  const auto plain = handle(request(kInsert, docs, false));
  ASSERT_EQ(traced.first, Action::kReply);
  EXPECT_EQ(traced.second, plain.second);
  const auto reply = codec::OpMsg::parse(traced.second);
  EXPECT_TRUE(reply.trace_context.empty());
  EXPECT_NE(testing::Bson(reply.body).json().find("\"code\" : 121"), std::string::npos);
}

TEST_F(TraceContext, TheLoggedTraceparentIsBounded) {
  const std::string huge(64 * 1024, '7');
  handle(request(kFind, {}, true, huge));
  EXPECT_EQ(conv->request_traceparent().size(), Conversation::kMaxLoggedBytes);
  EXPECT_TRUE(conv->request_traceparent().ends_with(base::kCutMarker));
  handle(request(kFind, {}, false));
  EXPECT_TRUE(conv->request_traceparent().empty());
}

// FerretDB 1.x (wire version 21) and servers before wire version 29 close the connection on
// section kind 3: it goes to them without it, the rest of the request as sent.
TEST_F(TraceContext, LeftOutForAnUpstreamThatCannotTakeIt) {
  const auto [action, bytes] = handle(request(kFind, {}, true), "web", 21);
  ASSERT_EQ(action, Action::kForward);
  EXPECT_EQ(bytes, request(kFind, {}, false));
  EXPECT_EQ(conv->request_traceparent(), kTraceparent);  // still logged

  const std::string big(200, 'x');
  const std::vector<std::string> docs = {R"({"_id": 1})", R"({"_id": 2, "pad": ")" + big + "\"}"};
  const auto rewritten = handle(request(kInsert, docs, true), "web", 21);
  const auto msg = codec::OpMsg::parse(rewritten.second);
  EXPECT_EQ(msg.sequences[0].documents.size(), 1u);
  EXPECT_TRUE(msg.trace_context.empty());

  const auto limited = handle(request(kFind, {}, true), "batch-1", 21);
  EXPECT_TRUE(codec::OpMsg::parse(limited.second).trace_context.empty());
}

TEST_F(TraceContext, KeptForAnUpstreamThatTakesIt) {
  const auto message = request(kFind, {}, true);
  EXPECT_EQ(handle(message, "web", 29).second, message);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::conversation
