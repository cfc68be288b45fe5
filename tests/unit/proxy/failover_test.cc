// The routing decisions of a session in front of a cluster: which replies mean the
// pinned server lost its role, when a pinned session leaves, where a new connection goes, and the
// reply to a request when no writable server can be selected.
#include "docguard/proxy/failover.h"

#include <gtest/gtest.h>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/op_compressed.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"

namespace docguard::proxy {
namespace {

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

constexpr uint32_t kMax = 48'000'000;

TEST(Failover, StateChangeCodes) {
  for (int32_t code : {10107, 13435, 13436, 189, 91, 11602}) {
    EXPECT_TRUE(is_state_change_code(code)) << code;
  }
  for (int32_t code : {0, 6, 121, 11000, 133, 18, 13}) {
    EXPECT_FALSE(is_state_change_code(code)) << code;
  }
}

TEST(Failover, ReplyCodesWhereDriversLook) {
  EXPECT_EQ(state_change_code(msg_reply(R"({"ok": 1, "n": 1})"), kMax), 0);
  EXPECT_EQ(state_change_code(msg_reply(R"({"ok": 0, "code": 10107,
      "codeName": "NotWritablePrimary", "errorLabels": ["RetryableWriteError"]})"),
                              kMax),
            10107);
  EXPECT_EQ(state_change_code(msg_reply(R"({"ok": 0, "code": 13435})"), kMax), 13435);
  EXPECT_EQ(state_change_code(msg_reply(R"({"ok": 0, "code": {"$numberLong": "11602"}})"), kMax),
            11602);
  EXPECT_EQ(
      state_change_code(msg_reply(R"({"ok": 1, "n": 1, "writeConcernError": {"code": 91}})"), kMax),
      91);
  EXPECT_EQ(state_change_code(msg_reply(R"({"ok": 1, "n": 0, "writeErrors": [
      {"index": 0, "code": 11000}, {"index": 1, "code": 189}]})"),
                              kMax),
            189);
  // docguard's own refusals and ordinary errors are not failovers.
  EXPECT_EQ(state_change_code(msg_reply(R"({"ok": 1, "n": 0, "writeErrors": [
      {"index": 0, "code": 121, "codeName": "DocumentValidationFailure"}]})"),
                              kMax),
            0);
  EXPECT_EQ(state_change_code(msg_reply(R"({"ok": 0, "code": 18})"), kMax), 0);
}

TEST(Failover, ReplyFamiliesAndGarbage) {
  auto doc = json(R"({"ok": 0, "code": 13436})");
  const auto reply = codec::build_op_reply(5, 7, doc.view().bytes());
  EXPECT_EQ(state_change_code(reply, kMax), 13436);
  const auto plain = msg_reply(R"({"ok": 0, "code": 10107})");
  const auto zlib = codec::compress_message(plain, codec::Compressor::kZlib);
  EXPECT_EQ(state_change_code(zlib, kMax), 10107);
  std::vector<uint8_t> garbage(40, 0xff);
  EXPECT_EQ(state_change_code(garbage, kMax), 0);
  EXPECT_EQ(state_change_code({}, kMax), 0);
  auto truncated = plain;
  truncated.resize(truncated.size() - 3);
  EXPECT_EQ(state_change_code(truncated, kMax), 0);
}

TEST(Failover, OneReadOfTheReplyKeepsTheDriversOrder) {
  // The top-level code wins over writeConcernError, which wins over writeErrors, whatever
  // order the fields come in; each field counts at its first occurrence only.
  EXPECT_EQ(state_change_code(msg_reply(R"({"writeErrors": [{"code": 189}],
      "writeConcernError": {"code": 91}, "code": 10107, "ok": 0})"),
                              kMax),
            10107);
  EXPECT_EQ(state_change_code(msg_reply(R"({"writeErrors": [{"code": 189}],
      "writeConcernError": {"code": 91}, "code": 18, "ok": 0})"),
                              kMax),
            91);
  EXPECT_EQ(state_change_code(msg_reply(R"({"writeErrors": [{"code": 189}],
      "writeConcernError": {"code": 18}, "ok": 1})"),
                              kMax),
            189);
  EXPECT_EQ(state_change_code(msg_reply(R"({"code": 18, "code": 91, "ok": 0})"), kMax), 0);
  EXPECT_TRUE(
      read_reply_signals(msg_reply(R"({"ismaster": false, "isWritablePrimary": true})"), kMax)
          .hello_not_writable);
  // A kind 1 section beside the body, a checksum, and a wrong kind.
  auto body = json(R"({"ok": 0, "code": 91})");
  auto cursor = json(R"({"x": 1})");
  auto with_sequence =
      codec::OpMsgBuilder(5, 7).body(body.get()).sequence("documents", {cursor.view()}).finish();
  EXPECT_EQ(state_change_code(with_sequence, kMax), 91);
  auto checksummed = msg_reply(R"({"ok": 0, "code": 189})");
  checksummed[codec::kHeaderSize] |= static_cast<uint8_t>(codec::op_msg_flags::kChecksumPresent);
  checksummed.resize(checksummed.size() + 4);
  codec::store_le32(checksummed.data(), static_cast<int32_t>(checksummed.size()));
  EXPECT_EQ(state_change_code(checksummed, kMax), 189);
  auto bad_kind = msg_reply(R"({"ok": 0, "code": 189})");
  bad_kind[codec::kHeaderSize + 4] = 7;
  EXPECT_EQ(state_change_code(bad_kind, kMax), 0);
}

cluster::Topology replica_set(std::string primary, uint64_t generation) {
  cluster::Topology t;
  t.type = primary.empty() ? cluster::TopologyType::kReplicaSetNoPrimary
                           : cluster::TopologyType::kReplicaSetWithPrimary;
  t.primary = primary;
  if (!primary.empty()) t.writable = t.candidates = {primary};
  t.primary_generation = generation;
  return t;
}

TEST(Failover, PinnedSessionLeavesAnOldPrimaryOnly) {
  // Pinned to a:1 in generation 1.
  EXPECT_FALSE(must_leave_server(replica_set("a:1", 1), "a:1", 1));
  EXPECT_TRUE(must_leave_server(replica_set("b:2", 2), "a:1", 1));   // stepped down
  EXPECT_TRUE(must_leave_server(replica_set("", 2), "a:1", 1));      // no primary now
  EXPECT_FALSE(must_leave_server(replica_set("a:1", 3), "a:1", 1));  // re-elected: stays
  // Several mongos: one more or one fewer leaves the others pinned.
  cluster::Topology sharded;
  sharded.type = cluster::TopologyType::kSharded;
  sharded.writable = {"m1:1", "m3:3"};
  sharded.candidates = {"m1:1"};  // m3 outside the latency window: still valid
  sharded.primary_generation = 4;
  EXPECT_FALSE(must_leave_server(sharded, "m3:3", 3));
  EXPECT_TRUE(must_leave_server(sharded, "m2:2", 3));
  // In front of one server nothing is gained by closing connections.
  cluster::Topology single;
  single.type = cluster::TopologyType::kSingle;
  single.primary_generation = 2;
  EXPECT_FALSE(must_leave_server(single, "a:1", 1));
  cluster::Topology unknown;
  unknown.primary_generation = 2;
  EXPECT_FALSE(must_leave_server(unknown, "a:1", 1));
}

TEST(Failover, NewConnectionsSpreadAndAvoidSuspects) {
  cluster::Topology t;
  t.type = cluster::TopologyType::kSharded;
  t.writable = t.candidates = {"m1:1", "m2:2", "m3:3"};
  EXPECT_EQ(pick_server(t, 0, {}), "m1:1");
  EXPECT_EQ(pick_server(t, 1, {}), "m2:2");
  EXPECT_EQ(pick_server(t, 5, {}), "m3:3");
  EXPECT_EQ(pick_server(t, 1, {"m2:2"}), "m3:3");
  EXPECT_EQ(pick_server(t, 2, {"m3:3"}), "m1:1");
  EXPECT_EQ(pick_server(t, 0, {"m1:1", "m2:2", "m3:3"}), "");
  EXPECT_EQ(pick_server(replica_set("", 2), 0, {}), "");
}

TEST(Failover, OnlyAPlainSingleHostDialsItsSeed) {
  cluster::Topology unknown;
  EXPECT_TRUE(may_dial_seed(unknown, 1, false, false));
  cluster::Topology single;
  single.type = cluster::TopologyType::kSingle;
  EXPECT_TRUE(may_dial_seed(single, 1, false, false));
  EXPECT_FALSE(may_dial_seed(unknown, 3, false, false));  // several seeds: wait
  EXPECT_FALSE(may_dial_seed(unknown, 1, false, true));   // replicaSet=: wait for a primary
  EXPECT_FALSE(may_dial_seed(unknown, 1, true, false));   // SRV
  EXPECT_FALSE(may_dial_seed(replica_set("", 2), 1, false, false));
}

TEST(Failover, NoWritableServerReplyInTheRequestsFamily) {
  auto hello = json(R"({"hello": 1, "$db": "admin"})");
  const auto msg = codec::OpMsgBuilder(42, 0).body(hello.get()).finish();
  const auto reply = no_writable_server_reply(msg, -3, "docguard: no writable server");
  const auto header = codec::read_header(reply.data());
  EXPECT_EQ(header.op_code, codec::OpCode::kMsg);
  EXPECT_EQ(header.response_to, 42);
  EXPECT_EQ(header.request_id, -3);
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
  const auto legacy = no_writable_server_reply(query, -4, "x");
  EXPECT_EQ(codec::read_header(legacy.data()).op_code, codec::OpCode::kReply);
  EXPECT_EQ(codec::read_header(legacy.data()).response_to, 9);
  EXPECT_EQ(codec::OpReply::parse(legacy).documents.size(), 1u);

  // An unacknowledged write expects no reply.
  auto insert = json(R"({"insert": "c", "$db": "t"})");
  auto w0 = codec::OpMsgBuilder(43, 0).body(insert.get()).finish();
  w0[codec::kHeaderSize] |= static_cast<uint8_t>(codec::op_msg_flags::kMoreToCome);
  EXPECT_TRUE(no_writable_server_reply(w0, -5, "x").empty());
}

}  // namespace
}  // namespace docguard::proxy

namespace docguard::proxy {
namespace {

TEST(Failover, HelloThatSaysNotWritable) {
  auto hello = [](const char* body) { return read_reply_signals(msg_reply(body), kMax); };
  EXPECT_TRUE(
      hello(R"({"isWritablePrimary": false, "secondary": true, "ok": 1})").hello_not_writable);
  EXPECT_FALSE(hello(R"({"isWritablePrimary": true, "ok": 1})").hello_not_writable);
  EXPECT_FALSE(hello(R"({"n": 1, "ok": 1})").hello_not_writable);
  auto doc = json(R"({"ismaster": false, "ok": 1})");
  EXPECT_TRUE(
      read_reply_signals(codec::build_op_reply(1, 2, doc.view().bytes()), kMax).hello_not_writable);
  const auto both = hello(R"({"ok": 0, "code": 189})");
  EXPECT_EQ(both.state_change_code, 189);
  EXPECT_FALSE(both.hello_not_writable);
}

}  // namespace
}  // namespace docguard::proxy
