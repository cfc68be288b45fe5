// The query guardrail's refusals: the server's notablescan error (code 291) for a read, and
// per-statement write errors with the same code and the code-121 path's batch semantics.
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
using Kind = RequestPlan::Kind;

Violation unindexed(int32_t index) {
  Violation v;
  v.kind = rules::RuleKind::kRequireIndex;
  v.rule_match = "shop.*";
  v.rule_line = 3;
  v.specifics = Violation::UnindexedQuery{
      "ci-indexes", "{customer: ?} sort {created: -1}", {{"customer", "1"}, {"created", "-1"}}};
  v.action = Action::kBlock;
  v.statement_index = index;
  return v;
}

std::string body_json(const std::vector<uint8_t>& message) {
  return Message::parse(message)->body().json();
}

TEST(GuardrailRefusalTest, ReadGetsTheNotablescanErrorWithErrInfo) {
  auto m = request(R"({"find": "orders", "$db": "shop", "filter": {"customer": "x"}})");
  Verdict v;
  v.violations.push_back(unindexed(-1));
  v.block_command = true;
  RequestPlan plan = plan_request(m->msg, m->cmd, v, 7);
  ASSERT_EQ(plan.kind, Kind::kReplyNow);
  const std::string json = body_json(plan.message);
  EXPECT_NE(json.find(R"("ok" : 0.0)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("errmsg" : "No indexed plans available, and running with 'notablescan')"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("code" : 291, "codeName" : "NoQueryExecutionPlans")"), std::string::npos)
      << json;
  // The rule's kind, not its id; no match glob or config line: those are the operator's.
  EXPECT_NE(json.find(R"("errInfo" : { "rule" : "require_index", "shape" : "{customer: ?} sort )"
                      R"({created: -1}", "index" : { "customer" : 1, "created" : -1 } })"),
            std::string::npos)
      << json;
  EXPECT_EQ(json.find("ci-indexes"), std::string::npos) << json;
}

TEST(GuardrailRefusalTest, RevealRuleSourceNamesTheRuleIdMatchAndLine) {
  auto m = request(R"({"find": "orders", "$db": "shop", "filter": {"customer": "x"}})");
  Verdict v;
  v.violations.push_back(unindexed(-1));
  v.violations[0].rule_match = "shop.*";
  v.violations[0].rule_line = 3;
  v.block_command = true;
  RequestPlan plan = plan_request(m->msg, m->cmd, v, 7, RefusalOptions{true});
  const std::string json = body_json(plan.message);
  EXPECT_NE(json.find(R"("errInfo" : { "rule" : "ci-indexes", "shape" : "{customer: ?} sort )"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("match" : "shop.*", "ruleLine" : 3 })"), std::string::npos) << json;
  EXPECT_NE(json.find(R"(rule \"ci-indexes\")"), std::string::npos) << json;
}

TEST(GuardrailRefusalTest, UnorderedUpdateKeepsTheOthersAndMergesTheReply) {
  auto m = request(R"({"update": "orders", "$db": "shop", "ordered": false, "updates": [
      {"q": {"_id": 0}, "u": {"$set": {"a": 1}}}, {"q": {"x": 1}, "u": {"$set": {"a": 1}}},
      {"q": {"_id": 2}, "u": {"$set": {"a": 1}}}]})");
  Verdict v;
  v.violations.push_back(unindexed(1));
  v.blocked_statements = {1};
  RequestPlan plan = plan_request(m->msg, m->cmd, v, 7);
  ASSERT_EQ(plan.kind, Kind::kForwardRewritten);
  EXPECT_EQ(Message::parse(plan.message)->cmd.statements.size(), 2u);
  Bson up(R"({"n": 2, "nModified": 2, "ok": 1.0})");
  auto reply = codec::OpMsgBuilder(900, 42).body(up.get()).finish();
  const std::string json = body_json(merge_reply(*plan.merge, Message::parse(reply)->msg, 42));
  EXPECT_NE(json.find(R"("n" : 2)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("index" : 1, "code" : 291, "codeName" : "NoQueryExecutionPlans")"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("rule" : "require_index")"), std::string::npos) << json;
}

TEST(GuardrailRefusalTest, OrderedDeleteStopsAtTheRefusedStatement) {
  auto m = request(R"({"delete": "orders", "$db": "shop", "ordered": true, "deletes": [
      {"q": {"x": 1}, "limit": 0}, {"q": {"_id": 1}, "limit": 0}]})");
  Verdict v;
  v.violations.push_back(unindexed(0));
  v.blocked_statements = {0};
  RequestPlan plan = plan_request(m->msg, m->cmd, v, 7);
  ASSERT_EQ(plan.kind, Kind::kReplyNow);  // nothing before it: answered at once, never "ok"
  const std::string json = body_json(plan.message);
  EXPECT_NE(json.find(R"("n" : 0, "writeErrors" : [ { "index" : 0, "code" : 291)"),
            std::string::npos)
      << json;
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::conversation
