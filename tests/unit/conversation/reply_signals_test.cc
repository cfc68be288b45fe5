// What an upstream reply tells the failover (the state-change codes drivers act on, a demoted
// hello), read once by Conversation::on_reply; and the error a request gets when the session has
// no upstream to forward it to.
#include "docguard/conversation/reply_signals.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "compress_message.h"
#include "docguard/codec/bson_view.h"
#include "docguard/codec/op_compressed.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"
#include "docguard/conversation/conversation.h"
#include "docguard/settings/yaml_settings.h"

namespace docguard::conversation {
namespace {
namespace DOCGUARD_UNITY_ID {

codec::OwnedBson json(const char* text) {
  bson_error_t err;
  bson_t* b = bson_new_from_json(reinterpret_cast<const uint8_t*>(text), -1, &err);
  EXPECT_NE(b, nullptr) << err.message;
  return codec::OwnedBson(b);
}

std::vector<uint8_t> msg_reply(const char* body) {
  auto doc = json(body);
  return codec::OpMsgBuilder(5, 7).body(doc.get()).finish();
}

struct Host : ConversationHost {
  int32_t new_request_id() override { return -1; }
};

// The signals as the session gets them: through a conversation's on_reply, which decompresses.
ReplySignals signals_of(codec::Bytes reply) {
  static rules::Engine engine(settings::parse_rules(YAML::Load("mode: warn\n"), "test.yaml"),
                              nullptr, nullptr);
  static const ConversationSettings settings;
  Host host;
  Conversation conv(engine, settings, "127.0.0.1:5", host);
  const auto outcome = conv.on_reply(reply);
  // Read directly, the uncompressed reply says the same.
  if (reply.size() >= codec::kHeaderSize &&
      codec::read_header(reply.data()).op_code != codec::OpCode::kCompressed) {
    const ReplySignals direct = read_reply_signals(reply);
    EXPECT_EQ(direct.state_change, outcome.signals.state_change);
    EXPECT_EQ(direct.hello_not_writable, outcome.signals.hello_not_writable);
  }
  return outcome.signals;
}

int32_t code_of(const ReplySignals& s) {
  return s.state_change ? codec::code_of(*s.state_change) : 0;
}
int32_t code_in(codec::Bytes reply) {
  // on_reply needs a whole header; shorter input is read directly.
  if (reply.size() < codec::kHeaderSize) return code_of(read_reply_signals(reply));
  return code_of(signals_of(reply));
}

// A conversation's refusal of `request` (empty when it expects no reply).
std::vector<uint8_t> refuse(codec::Bytes request, const std::string& errmsg) {
  static rules::Engine engine(settings::parse_rules(YAML::Load("mode: warn\n"), "test.yaml"),
                              nullptr, nullptr);
  static const ConversationSettings settings;
  Host host;
  Conversation conv(engine, settings, "127.0.0.1:5", host);
  const auto out = conv.refuse(request, codec::ServerError::kFailedToSatisfyReadPreference, errmsg);
  if (out.action != Conversation::RequestOutcome::Action::kReply) return {};
  return {out.bytes.begin(), out.bytes.end()};
}

TEST(ReplySignals, StateChangeCodes) {
  for (int32_t code : {10107, 13435, 13436, 189, 91, 11602}) {
    EXPECT_TRUE(codec::is_state_change(code)) << code;
  }
  for (int32_t code : {0, 6, 121, 11000, 133, 18, 13, 11600}) {
    EXPECT_FALSE(codec::is_state_change(code)) << code;
  }
}

TEST(ReplySignals, ReplyCodesWhereDriversLook) {
  EXPECT_EQ(code_in(msg_reply(R"({"ok": 1, "n": 1})")), 0);
  EXPECT_EQ(code_in(msg_reply(R"({"ok": 0, "code": 10107,
      "codeName": "NotWritablePrimary", "errorLabels": ["RetryableWriteError"]})")),
            10107);
  EXPECT_EQ(code_in(msg_reply(R"({"ok": 0, "code": 13435})")), 13435);
  EXPECT_EQ(code_in(msg_reply(R"({"ok": 0, "code": {"$numberLong": "11602"}})")), 11602);
  EXPECT_EQ(code_in(msg_reply(R"({"ok": 1, "n": 1, "writeConcernError": {"code": 91}})")), 91);
  EXPECT_EQ(code_in(msg_reply(R"({"ok": 1, "n": 0, "writeErrors": [
      {"index": 0, "code": 11000}, {"index": 1, "code": 189}]})")),
            189);
  // docguard's own refusals and ordinary errors are not failovers.
  EXPECT_EQ(code_in(msg_reply(R"({"ok": 1, "n": 0, "writeErrors": [
      {"index": 0, "code": 121, "codeName": "DocumentValidationFailure"}]})")),
            0);
  EXPECT_EQ(code_in(msg_reply(R"({"ok": 0, "code": 18})")), 0);
}

TEST(ReplySignals, ReplyFamiliesAndGarbage) {
  auto doc = json(R"({"ok": 0, "code": 13436})");
  const auto reply = codec::build_op_reply(5, 7, doc.view().bytes());
  EXPECT_EQ(code_in(reply), 13436);
  const auto plain = msg_reply(R"({"ok": 0, "code": 10107})");
  const auto zlib = testing::compress_message(plain, codec::Compressor::kZlib);
  EXPECT_EQ(code_in(zlib), 10107);
  std::vector<uint8_t> garbage(40, 0xff);
  EXPECT_EQ(code_in(garbage), 0);
  EXPECT_EQ(code_in({}), 0);
  auto truncated = plain;
  truncated.resize(truncated.size() - 3);
  EXPECT_EQ(code_in(truncated), 0);
}

TEST(ReplySignals, OneReadOfTheReplyKeepsTheDriversOrder) {
  // The top-level code wins over writeConcernError, which wins over writeErrors, whatever
  // order the fields come in; each field counts at its first occurrence only.
  EXPECT_EQ(code_in(msg_reply(R"({"writeErrors": [{"code": 189}],
      "writeConcernError": {"code": 91}, "code": 10107, "ok": 0})")),
            10107);
  EXPECT_EQ(code_in(msg_reply(R"({"writeErrors": [{"code": 189}],
      "writeConcernError": {"code": 91}, "code": 18, "ok": 0})")),
            91);
  EXPECT_EQ(code_in(msg_reply(R"({"writeErrors": [{"code": 189}],
      "writeConcernError": {"code": 18}, "ok": 1})")),
            189);
  EXPECT_EQ(code_in(msg_reply(R"({"code": 18, "code": 91, "ok": 0})")), 0);
  EXPECT_TRUE(signals_of(msg_reply(R"({"ismaster": false, "isWritablePrimary": true})"))
                  .hello_not_writable);
  // A kind 1 section beside the body, a checksum, and a wrong kind.
  auto body = json(R"({"ok": 0, "code": 91})");
  auto cursor = json(R"({"x": 1})");
  auto with_sequence =
      codec::OpMsgBuilder(5, 7).body(body.get()).sequence("documents", {cursor.view()}).finish();
  EXPECT_EQ(code_in(with_sequence), 91);
  auto checksummed = msg_reply(R"({"ok": 0, "code": 189})");
  checksummed[codec::kHeaderSize] |= static_cast<uint8_t>(codec::op_msg_flags::kChecksumPresent);
  checksummed.resize(checksummed.size() + 4);
  codec::store_le32(checksummed.data(), static_cast<int32_t>(checksummed.size()));
  EXPECT_EQ(code_in(checksummed), 189);
  auto bad_kind = msg_reply(R"({"ok": 0, "code": 189})");
  bad_kind[codec::kHeaderSize + 4] = 7;
  EXPECT_EQ(code_in(bad_kind), 0);
}

TEST(ReplySignals, HelloThatSaysNotWritable) {
  auto hello = [](const char* body) { return signals_of(msg_reply(body)); };
  EXPECT_TRUE(
      hello(R"({"isWritablePrimary": false, "secondary": true, "ok": 1})").hello_not_writable);
  EXPECT_FALSE(hello(R"({"isWritablePrimary": true, "ok": 1})").hello_not_writable);
  EXPECT_FALSE(hello(R"({"n": 1, "ok": 1})").hello_not_writable);
  auto doc = json(R"({"ismaster": false, "ok": 1})");
  EXPECT_TRUE(signals_of(codec::build_op_reply(1, 2, doc.view().bytes())).hello_not_writable);
  const auto both = hello(R"({"ok": 0, "code": 189})");
  EXPECT_EQ(code_of(both), 189);
  EXPECT_FALSE(both.hello_not_writable);
}

TEST(Refusal, InTheRequestsFamily) {
  auto hello = json(R"({"hello": 1, "$db": "admin"})");
  const auto msg = codec::OpMsgBuilder(42, 0).body(hello.get()).finish();
  const auto reply = refuse(msg, "docguard: no writable server");
  const auto header = codec::read_header(reply.data());
  EXPECT_EQ(header.op_code, codec::OpCode::kMsg);
  EXPECT_EQ(header.response_to, 42);
  EXPECT_EQ(header.request_id, -1);
  const auto parsed = codec::OpMsg::parse(reply);
  bson_t body = parsed.body.borrow();
  bson_iter_t it;
  ASSERT_TRUE(bson_iter_init_find(&it, &body, "code"));
  EXPECT_EQ(bson_iter_as_int64(&it), 133);
  EXPECT_EQ(codec::find_string(parsed.body, "codeName"), "FailedToSatisfyReadPreference");
  EXPECT_EQ(codec::find_string(parsed.body, "errmsg"), "docguard: no writable server");
  ASSERT_TRUE(bson_iter_init_find(&it, &body, "ok"));
  EXPECT_EQ(bson_iter_as_double(&it), 0.0);

  // The legacy handshake (OP_QUERY isMaster) gets an OP_REPLY.
  auto is_master = json(R"({"isMaster": 1})");
  std::vector<uint8_t> query(codec::kHeaderSize);
  const auto append32 = [&](int32_t v) {
    for (int i = 0; i < 4; ++i) query.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  append32(0);
  for (char c : std::string("admin.$cmd")) query.push_back(static_cast<uint8_t>(c));
  query.push_back(0);
  append32(0);
  append32(-1);
  const auto bytes = is_master.bytes();
  query.insert(query.end(), bytes.begin(), bytes.end());
  const int32_t header_fields[] = {static_cast<int32_t>(query.size()), 9, 0,
                                   static_cast<int32_t>(codec::OpCode::kQuery)};
  for (int f = 0; f < 4; ++f) {
    for (int i = 0; i < 4; ++i)
      query[f * 4 + i] = static_cast<uint8_t>(header_fields[f] >> (8 * i));
  }
  const auto legacy = refuse(query, "x");
  EXPECT_EQ(codec::read_header(legacy.data()).op_code, codec::OpCode::kReply);
  EXPECT_EQ(codec::read_header(legacy.data()).response_to, 9);
  EXPECT_EQ(codec::OpReply::parse(legacy).documents.size(), 1u);

  // An unacknowledged write expects no reply.
  auto insert = json(R"({"insert": "c", "$db": "t"})");
  auto w0 = codec::OpMsgBuilder(43, 0).body(insert.get()).finish();
  w0[codec::kHeaderSize] |= static_cast<uint8_t>(codec::op_msg_flags::kMoreToCome);
  EXPECT_TRUE(refuse(w0, "x").empty());
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::conversation

namespace docguard::conversation {
namespace {
namespace DOCGUARD_UNITY_ID {

ReplySignals workload_signals(const char* body) {
  return read_reply_signals(msg_reply(body), /*for_workload=*/true);
}

// The workload ledger's part of a reply is read only when asked for: a reply nobody times
// costs the ledger nothing.
TEST(ReplySignalsWorkload, ReadOnlyWhenAsked) {
  const auto reply = msg_reply(R"({"cursor": {"firstBatch": [{"a": 1}], "id": 0}, "ok": 0})");
  const ReplySignals plain = read_reply_signals(reply);
  EXPECT_EQ(plain.documents, 0u);
  EXPECT_FALSE(plain.failed);
  const ReplySignals timed = read_reply_signals(reply, true);
  EXPECT_EQ(timed.documents, 1u);
  EXPECT_TRUE(timed.failed);
}

// firstBatch's documents are counted whether firstBatch comes first (as servers write it) or
// not, and whatever the batch holds.
TEST(ReplySignalsWorkload, CountsTheFirstBatch) {
  EXPECT_EQ(workload_signals(R"({"cursor": {"firstBatch": [], "id": 0}, "ok": 1})").documents, 0u);
  EXPECT_EQ(
      workload_signals(R"({"cursor": {"firstBatch": [{"a": 1}, {"b": {"c": 2}}, {}]}, "ok": 1})")
          .documents,
      3u);
  EXPECT_EQ(
      workload_signals(R"({"cursor": {"id": 0, "ns": "d.c", "firstBatch": [{}, {}]}})").documents,
      2u);
  EXPECT_EQ(workload_signals(R"({"cursor": {"firstBatch": [{}, 1, "x", {}]}, "ok": 1})").documents,
            4u);
  EXPECT_EQ(workload_signals(R"({"cursor": {"firstBatchX": [{}]}, "ok": 1})").documents, 0u);
  EXPECT_EQ(workload_signals(R"({"n": 5, "ok": 1})").documents, 5u);
  EXPECT_FALSE(workload_signals(R"({"n": 5, "ok": 1})").failed);
  EXPECT_TRUE(workload_signals(R"({"n": 0, "writeErrors": [{"code": 11000}], "ok": 1})").failed);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::conversation
