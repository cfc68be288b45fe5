#include <gtest/gtest.h>

#include "docguard/conversation/reply_merge.h"
#include "docguard/conversation/request_plan.h"
#include "test_messages.h"

namespace docguard::conversation {
namespace {
namespace DOCGUARD_UNITY_ID {

using rules::Action;
using rules::Verdict;
using rules::Violation;
using testing::Bson;
using testing::Message;
using testing::request;
using testing::small_docs;
using Kind = RequestPlan::Kind;

// A blocking violation of statement `index` (or the whole command for -1).
Violation blocked(int32_t index, rules::RuleKind kind = rules::RuleKind::kMaxArrayLength) {
  Violation v;
  v.kind = kind;
  v.rule_match = "shop.products";
  v.field_path = "reviews";
  v.measured = 150;
  v.bound = 100;
  v.action = Action::kBlock;
  v.statement_index = index;
  Bson id("{\"_id\": " + std::to_string(index) + "}");
  v.failing_id.assign(id.view().data, id.view().data + id.view().size);
  return v;
}

Verdict verdict_blocking(std::vector<int32_t> indices) {
  Verdict v;
  for (int32_t i : indices) v.violations.push_back(blocked(i));
  v.blocked_statements = indices;
  return v;
}

// The documents forwarded in a rewritten request: their _id values.
std::vector<int> forwarded_ids(const Message& m) {
  std::vector<int> ids;
  for (const auto& stmt : m.cmd.statements) {
    bson_iter_t it;
    bson_t b = stmt.borrow();
    if (bson_iter_init_find(&it, &b, "_id")) ids.push_back(bson_iter_int32(&it));
  }
  return ids;
}

std::unique_ptr<Message> reply(const std::string& body_json, int32_t request_id = 900,
                               int32_t response_to = 42) {
  Bson body(body_json);
  return Message::parse(codec::OpMsgBuilder(request_id, response_to).body(body.get()).finish());
}

std::string body_json(const std::vector<uint8_t>& message) {
  auto m = Message::parse(message);
  return m->body().json();
}

TEST(EnforcementTest, NothingBlockedForwardsTheOriginal) {
  auto m = request(R"({"insert": "products", "$db": "shop"})", "documents", small_docs(2));
  Verdict v;
  v.violations.push_back(blocked(0));
  v.violations[0].action = Action::kWarn;
  RequestPlan plan = plan_request(m->msg, m->cmd, v, 7);
  EXPECT_EQ(plan.kind, Kind::kForwardOriginal);
  EXPECT_TRUE(plan.message.empty());
}

TEST(EnforcementTest, OrderedForwardsOnlyStatementsBeforeTheFirstBlocked) {
  auto m = request(R"({"insert": "products", "$db": "shop", "ordered": true})", "documents",
                   small_docs(5));
  RequestPlan plan = plan_request(m->msg, m->cmd, verdict_blocking({2, 4}), 7);
  ASSERT_EQ(plan.kind, Kind::kForwardRewritten);
  auto fwd = Message::parse(plan.message);
  EXPECT_EQ(fwd->msg.header.request_id, 42);  // the client's requestID
  EXPECT_EQ(forwarded_ids(*fwd), (std::vector<int>{0, 1}));
  EXPECT_EQ(fwd->cmd.payload_source, codec::PayloadSource::kSequence);
  EXPECT_EQ(fwd->body().json(), m->body().json());
  ASSERT_NE(plan.merge, nullptr);

  auto up = reply(R"({"n": 2, "ok": 1.0})");
  auto merged = Message::parse(merge_reply(*plan.merge, up->msg, 42));
  EXPECT_EQ(merged->msg.header.response_to, 42);
  const std::string json = merged->body().json();
  EXPECT_NE(json.find(R"("n" : 2)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("index" : 2, "code" : 121, "codeName" : "DocumentValidationFailure")"),
            std::string::npos)
      << json;
  EXPECT_EQ(json.find(R"("index" : 4)"), std::string::npos) << json;  // stopped at 2
  // By default the refusal names the rule's kind, the field, the measure and the bound, never
  // the operator's configuration (the rule's match glob or its line).
  EXPECT_NE(json.find(R"("errInfo" : { "rule" : "max_array_length", )"
                      R"("fieldPath" : "reviews", "measured" : 150, "bound" : 100, )"
                      R"("failingDocumentId" : 2 })"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("docguard: design rule max_array_length violated"), std::string::npos)
      << json;
  EXPECT_EQ(json.find("shop.products"), std::string::npos) << json;
  EXPECT_EQ(json.find("ruleLine"), std::string::npos) << json;
}

TEST(EnforcementTest, UnorderedForwardsEveryAllowedStatementAndRemapsUpstreamErrors) {
  auto m = request(R"({"insert": "products", "$db": "shop", "ordered": false})", "documents",
                   small_docs(5));
  RequestPlan plan = plan_request(m->msg, m->cmd, verdict_blocking({1, 3}), 7);
  ASSERT_EQ(plan.kind, Kind::kForwardRewritten);
  auto fwd = Message::parse(plan.message);
  EXPECT_EQ(forwarded_ids(*fwd), (std::vector<int>{0, 2, 4}));
  EXPECT_FALSE(fwd->cmd.ordered);

  // Upstream: forwarded #1 (client #2) was a duplicate key.
  auto up = reply(R"({"n": 2, "writeErrors": [{"index": 1, "code": 11000, "errmsg": "dup"}],
                      "ok": 1.0, "$clusterTime": {"clusterTime": 1}})");
  const std::string json = body_json(merge_reply(*plan.merge, up->msg, 42));
  const size_t i1 = json.find(R"("index" : 1, "code" : 121)");
  const size_t i2 = json.find(R"("index" : 2, "code" : 11000)");
  const size_t i3 = json.find(R"("index" : 3, "code" : 121)");
  ASSERT_NE(i1, std::string::npos) << json;
  ASSERT_NE(i2, std::string::npos) << json;
  ASSERT_NE(i3, std::string::npos) << json;
  EXPECT_LT(i1, i2);
  EXPECT_LT(i2, i3);
  EXPECT_NE(json.find(R"("n" : 2)"), std::string::npos);
  EXPECT_NE(json.find("$clusterTime"), std::string::npos);
}

TEST(EnforcementTest, OrderedUpstreamErrorHidesOursAfterIt) {
  auto m = request(R"({"insert": "products", "$db": "shop"})", "documents", small_docs(4));
  RequestPlan plan = plan_request(m->msg, m->cmd, verdict_blocking({3}), 7);
  auto up = reply(R"({"n": 1, "writeErrors": [{"index": 1, "code": 11000, "errmsg": "dup"}],
                      "ok": 1})");
  const std::string json = body_json(merge_reply(*plan.merge, up->msg, 42));
  EXPECT_NE(json.find(R"("index" : 1, "code" : 11000)"), std::string::npos) << json;
  EXPECT_EQ(json.find("121"), std::string::npos) << json;
}

TEST(EnforcementTest, UpdatesRemapUpsertedAndKeepNModified) {
  auto m = request(R"({"update": "products", "$db": "shop", "ordered": false, "updates": [
      {"q": {"_id": 0}, "u": {"$set": {"a": 1}}, "upsert": true},
      {"q": {"_id": 1}, "u": {"$push": {"r": 1}}},
      {"q": {"_id": 2}, "u": {"$set": {"a": 1}}, "upsert": true}]})");
  RequestPlan plan = plan_request(m->msg, m->cmd, verdict_blocking({1}), 7);
  ASSERT_EQ(plan.kind, Kind::kForwardRewritten);
  auto fwd = Message::parse(plan.message);
  EXPECT_EQ(fwd->cmd.payload_source, codec::PayloadSource::kBody);
  ASSERT_EQ(fwd->cmd.statements.size(), 2u);
  // Body fields keep their order, the array holds the allowed statements.
  const std::string fwd_json = fwd->body().json();
  EXPECT_EQ(
      fwd_json.find(
          R"({ "update" : "products", "$db" : "shop", "ordered" : false, "updates" : [ { "q" : { "_id" : 0 })"),
      0u)
      << fwd_json;
  EXPECT_NE(fwd_json.find(R"({ "q" : { "_id" : 2 })"), std::string::npos) << fwd_json;

  auto up = reply(R"({"n": 2, "nModified": 0, "upserted": [{"index": 0, "_id": 0},
                      {"index": 1, "_id": 2}], "ok": 1})");
  const std::string json = body_json(merge_reply(*plan.merge, up->msg, 42));
  EXPECT_NE(json.find(R"("upserted" : [ { "index" : 0, "_id" : 0 }, { "index" : 2, "_id" : 2 } ])"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("nModified" : 0)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("index" : 1, "code" : 121)"), std::string::npos) << json;
}

TEST(EnforcementTest, NothingLeftRepliesDirectly) {
  auto m = request(R"({"update": "products", "$db": "shop", "updates": [
      {"q": {"_id": 0}, "u": {"$push": {"r": 1}}}, {"q": {"_id": 1}, "u": {"$push": {"r": 1}}}]})");
  RequestPlan plan = plan_request(m->msg, m->cmd, verdict_blocking({0, 1}), 77);
  ASSERT_EQ(plan.kind, Kind::kReplyNow);
  auto r = Message::parse(plan.message);
  EXPECT_EQ(r->msg.header.request_id, 77);
  EXPECT_EQ(r->msg.header.response_to, 42);
  const std::string json = r->body().json();
  EXPECT_NE(
      json.find(R"({ "ok" : 1.0, "n" : 0, "nModified" : 0, "writeErrors" : [ { "index" : 0, )"),
      std::string::npos)
      << json;
  EXPECT_EQ(json.find(R"("index" : 1)"), std::string::npos) << json;  // ordered: first only

  auto unordered =
      request(R"({"insert": "p", "$db": "s", "ordered": false})", "documents", small_docs(2));
  plan = plan_request(unordered->msg, unordered->cmd, verdict_blocking({0, 1}), 77);
  ASSERT_EQ(plan.kind, Kind::kReplyNow);
  const std::string json2 = body_json(plan.message);
  EXPECT_EQ(json2.find("nModified"), std::string::npos) << json2;
  EXPECT_NE(json2.find(R"("index" : 1)"), std::string::npos) << json2;
}

TEST(EnforcementTest, MoreToComeDropsViolatorsAndNeverReplies) {
  auto m = request(R"({"insert": "p", "$db": "s", "ordered": false})", "documents", small_docs(3),
                   codec::op_msg_flags::kMoreToCome);
  RequestPlan plan = plan_request(m->msg, m->cmd, verdict_blocking({1}), 7);
  ASSERT_EQ(plan.kind, Kind::kForwardRewritten);
  EXPECT_EQ(plan.merge, nullptr);
  auto fwd = Message::parse(plan.message);
  EXPECT_TRUE(fwd->msg.more_to_come());
  EXPECT_EQ(forwarded_ids(*fwd), (std::vector<int>{0, 2}));

  plan = plan_request(m->msg, m->cmd, verdict_blocking({0, 1, 2}), 7);
  EXPECT_EQ(plan.kind, Kind::kDrop);
  EXPECT_TRUE(plan.message.empty());
}

TEST(EnforcementTest, ChecksumIsStrippedFromRewrittenRequests) {
  auto m = request(R"({"insert": "p", "$db": "s", "ordered": false})", "documents", small_docs(3));
  std::vector<uint8_t> bytes = m->bytes;
  // Add a checksum: set bit 0, append 4 bytes, fix the length, compute it.
  bytes[16] |= 1;
  bytes.resize(bytes.size() + 4);
  codec::store_le32(bytes.data(), static_cast<int32_t>(bytes.size()));
  codec::recompute_checksum(bytes);
  auto with_crc = Message::parse(bytes);
  ASSERT_TRUE(with_crc->msg.checksum_present);
  RequestPlan plan = plan_request(with_crc->msg, with_crc->cmd, verdict_blocking({0}), 7);
  ASSERT_EQ(plan.kind, Kind::kForwardRewritten);
  auto fwd = Message::parse(plan.message);
  EXPECT_FALSE(fwd->msg.checksum_present);
  EXPECT_EQ(fwd->msg.flags & codec::op_msg_flags::kChecksumPresent, 0u);
  EXPECT_EQ(forwarded_ids(*fwd), (std::vector<int>{1, 2}));
}

TEST(EnforcementTest, FindAndModifyGetsACommandError) {
  auto m = request(R"({"findAndModify": "p", "$db": "s", "query": {"_id": 1},
                       "update": {"$push": {"r": 1}}})");
  Verdict v;
  v.violations.push_back(blocked(-1, rules::RuleKind::kRequirePushSlice));
  v.block_command = true;
  RequestPlan plan = plan_request(m->msg, m->cmd, v, 7);
  ASSERT_EQ(plan.kind, Kind::kReplyNow);
  const std::string json = body_json(plan.message);
  EXPECT_EQ(json.find(R"({ "ok" : 0.0, "errmsg" : "docguard: design rule require_push_slice)"), 0u)
      << json;
  EXPECT_NE(json.find(R"("code" : 121, "codeName" : "DocumentValidationFailure", "errInfo" : {)"),
            std::string::npos)
      << json;
}

TEST(EnforcementTest, BulkWriteIsBlockedAsAWhole) {
  auto m = request(R"({"bulkWrite": 1, "$db": "admin", "nsInfo": [{"ns": "s.p"}]})", "ops",
                   {R"({"insert": 0, "document": {"a": 1}})"});
  Verdict v = verdict_blocking({0});
  v.block_command = true;
  RequestPlan plan = plan_request(m->msg, m->cmd, v, 7);
  ASSERT_EQ(plan.kind, Kind::kReplyNow);
  EXPECT_NE(body_json(plan.message).find(R"("ok" : 0.0)"), std::string::npos);
}

std::vector<std::string> bulk_ops(int n) {
  std::vector<std::string> ops;
  for (int i = 0; i < n; ++i) {
    ops.push_back(R"({"insert": 0, "document": {"_id": )" + std::to_string(i) + "}}");
  }
  return ops;
}

TEST(EnforcementTest, BulkWriteUnorderedForwardsAllowedOpsAndMergesTheCursor) {
  auto m =
      request(R"({"bulkWrite": 1, "$db": "admin", "ordered": false, "nsInfo": [{"ns": "s.p"}]})",
              "ops", bulk_ops(4));
  RequestPlan plan = plan_request(m->msg, m->cmd, verdict_blocking({1, 3}), 7);
  ASSERT_EQ(plan.kind, Kind::kForwardRewritten);
  auto forwarded = Message::parse(plan.message);
  ASSERT_EQ(forwarded->cmd.statements.size(), 2u);  // ops 0 and 2
  auto up = reply(R"({"ok": 1.0, "cursor": {"id": 0, "firstBatch": [{"ok": 1.0, "idx": 0, "n": 1},
                     {"ok": 1.0, "idx": 1, "n": 1}], "ns": "admin.$cmd.bulkWrite"},
                     "nErrors": 0, "nInserted": 2, "nMatched": 0, "nModified": 0, "nUpserted": 0,
                     "nDeleted": 0})");
  const std::string json = body_json(merge_reply(*plan.merge, up->msg, 42));
  std::vector<std::string> order;
  for (const char* idx : {R"("idx" : 0)", R"("idx" : 1)", R"("idx" : 2)", R"("idx" : 3)"}) {
    EXPECT_NE(json.find(idx), std::string::npos) << idx << " in " << json;
  }
  EXPECT_LT(json.find(R"("idx" : 0)"), json.find(R"("idx" : 1)"));
  EXPECT_LT(json.find(R"("idx" : 1)"), json.find(R"("idx" : 2)"));
  EXPECT_LT(json.find(R"("idx" : 2)"), json.find(R"("idx" : 3)"));
  EXPECT_NE(json.find(R"("ok" : 0.0, "idx" : 1, "code" : 121)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("nErrors" : 2)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("nInserted" : 2)"), std::string::npos) << json;
}

TEST(EnforcementTest, BulkWriteOrderedStopsAndAnswersWhenNothingIsLeft) {
  auto m =
      request(R"({"bulkWrite": 1, "$db": "admin", "nsInfo": [{"ns": "s.p"}]})", "ops", bulk_ops(3));
  RequestPlan plan = plan_request(m->msg, m->cmd, verdict_blocking({0}), 7);
  ASSERT_EQ(plan.kind, Kind::kReplyNow);
  const std::string json = body_json(plan.message);
  EXPECT_NE(json.find(R"("firstBatch" : [ { "ok" : 0.0, "idx" : 0, "code" : 121)"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("nErrors" : 1)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("nInserted" : 0)"), std::string::npos) << json;
}

TEST(EnforcementTest, UpstreamCommandErrorsPassThroughUnchanged) {
  auto m = request(R"({"insert": "p", "$db": "s"})", "documents", small_docs(3));
  RequestPlan plan = plan_request(m->msg, m->cmd, verdict_blocking({2}), 7);
  auto up = reply(R"({"ok": 0.0, "errmsg": "not primary", "code": 10107})");
  EXPECT_TRUE(merge_reply(*plan.merge, up->msg, 42).empty());
}

TEST(EnforcementTest, RevealRuleSourceNamesTheMatchAndTheLine) {
  auto m = request(R"({"insert": "products", "$db": "shop", "ordered": true})", "documents",
                   small_docs(3));
  Verdict v = verdict_blocking({0});
  v.violations[0].rule_line = 12;
  RequestPlan plan = plan_request(m->msg, m->cmd, v, 7, RefusalOptions{true});
  ASSERT_EQ(plan.kind, Kind::kReplyNow);
  const std::string json = Message::parse(plan.message)->body().json();
  EXPECT_NE(json.find(R"("errInfo" : { "rule" : "max_array_length", "match" : "shop.products", )"
                      R"("ruleLine" : 12, "fieldPath" : "reviews", )"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"(design rule max_array_length (match \"shop.products\") violated)"),
            std::string::npos)
      << json;
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::conversation
