// The chain of checks: each phase meets the checks that take part in it, in the chain's order,
// and a write statement is judged by every check before any check learns from it, so a
// statement one check refuses teaches the others nothing.
#include "docguard/rules/check_chain.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "docguard/rules/engine.h"
#include "rules_yaml.h"
#include "test_messages.h"
#include "tracked_documents.h"

namespace docguard::rules {
namespace {

using testing::parse;
using testing::request;

struct Judges {
  std::vector<std::string>* seen;
  void judge(int statement) { seen->push_back("judges:" + std::to_string(statement)); }
};
struct Learns {
  std::vector<std::string>* seen;
  void learn(int statement) { seen->push_back("learns:" + std::to_string(statement)); }
};
struct JudgesAndLearns {
  std::vector<std::string>* seen;
  void judge(int statement) { seen->push_back("both judge:" + std::to_string(statement)); }
  void learn(int statement) { seen->push_back("both learn:" + std::to_string(statement)); }
};

TEST(CheckChainTest, APhaseMeetsTheChecksWithItsMethodInTheChainsOrder) {
  std::vector<std::string> seen;
  Judges judges{&seen};
  Learns learns{&seen};
  JudgesAndLearns both{&seen};
  CheckChain<JudgesAndLearns, Learns, Judges> chain(both, learns, judges);
  chain.run([](auto& check) -> decltype(check.judge(7)) { check.judge(7); });
  chain.run([](auto& check) -> decltype(check.learn(7)) { check.learn(7); });
  EXPECT_EQ(seen,
            (std::vector<std::string>{"both judge:7", "judges:7", "both learn:7", "learns:7"}));
}

// require_index blocks; a document's tags are tracked against a bound of 3 (array bounds make
// the namespace's documents tracked). A $natural hint asks for a collection scan, which the
// guardrail refuses even with the _id named. The server plans a write statement's query before
// its executor writes anything (getExecutorUpdate / getExecutorDelete, then the executor in
// write_ops_exec.cpp): the planner corpus has these statements' rows with their sources.
constexpr const char* kGuardedTags = R"(
rules:
  - match: "shop.orders"
    action: block
    require_index: true
    array_length: { tags: 3 }
)";

class ChainEngineTest : public ::testing::Test {
 protected:
  ChainEngineTest() : engine(parse(kGuardedTags), nullptr, nullptr) {
    engine.index_catalog().set("shop", "orders", {{"_id_", {{"_id", "1"}}}}, "test");
  }
  Verdict inspect(const char* body) {
    auto m = request(body);
    return engine.inspect(m->cmd, RequestContext{"app", "127.0.0.1:5000"});
  }
  Engine engine;
};

TEST_F(ChainEngineTest, APushTheGuardrailRefusesDoesNotGrowTheTrackedArray) {
  EXPECT_FALSE(inspect(R"({"insert": "orders", "$db": "shop",
                          "documents": [{"_id": 1, "tags": ["a", "b"]}]})")
                   .any_block());
  // Refused for its plan: it never reaches the server, so the array is still 2 long.
  Verdict refused = inspect(R"({"update": "orders", "$db": "shop", "updates": [
      {"q": {"_id": 1}, "u": {"$push": {"tags": "c"}}, "hint": {"$natural": 1}}]})");
  ASSERT_EQ(refused.blocked_statements, std::vector<int32_t>{0});
  ASSERT_EQ(refused.violations.size(), 1u);
  EXPECT_EQ(refused.violations[0].kind, RuleKind::kRequireIndex);
  // The push that does run makes it 3: within the bound. Had the refused push been counted,
  // the tracked length would be 4, past it.
  Verdict pushed = inspect(R"({"update": "orders", "$db": "shop", "updates": [
      {"q": {"_id": 1}, "u": {"$push": {"tags": "d"}}}]})");
  EXPECT_TRUE(pushed.violations.empty());
  // And the next one passes the bound: the tracker did count the push that ran.
  Verdict past = inspect(R"({"update": "orders", "$db": "shop", "updates": [
      {"q": {"_id": 1}, "u": {"$push": {"tags": "e"}}}]})");
  ASSERT_EQ(past.violations.size(), 1u);
  EXPECT_EQ(past.violations[0].kind, RuleKind::kTrackedArrayLength);
  EXPECT_EQ(past.violations[0].measured, 4);
}

TEST_F(ChainEngineTest, ADeleteTheGuardrailRefusesKeepsTheDocumentTracked) {
  inspect(R"({"insert": "orders", "$db": "shop", "documents": [{"_id": 2, "tags": ["a"]}]})");
  ASSERT_EQ(tracked_documents(engine), 1u);
  Verdict refused = inspect(R"({"delete": "orders", "$db": "shop", "deletes": [
      {"q": {"_id": 2}, "limit": 1, "hint": {"$natural": 1}}]})");
  ASSERT_EQ(refused.blocked_statements, std::vector<int32_t>{0});
  EXPECT_EQ(tracked_documents(engine), 1u);
  inspect(R"({"delete": "orders", "$db": "shop", "deletes": [{"q": {"_id": 2}, "limit": 1}]})");
  EXPECT_EQ(tracked_documents(engine), 0u);
}

TEST_F(ChainEngineTest, AStatementsQueryIsJudgedBeforeWhatItWrites) {
  // Both rules refuse the statement; the server plans a statement's query before it writes,
  // so the refusal the client gets (the first blocking violation) is the plan's.
  Verdict v = inspect(R"({"update": "orders", "$db": "shop", "updates": [
      {"q": {"_id": 3}, "u": {"$set": {"tags": [1, 2, 3, 4]}}, "hint": {"$natural": 1}}]})");
  ASSERT_EQ(v.blocked_statements, std::vector<int32_t>{0});
  ASSERT_EQ(v.violations.size(), 2u);
  EXPECT_EQ(v.violations[0].kind, RuleKind::kRequireIndex);
  EXPECT_EQ(v.violations[1].kind, RuleKind::kArrayLength);
}

}  // namespace
}  // namespace docguard::rules
