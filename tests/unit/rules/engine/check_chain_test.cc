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
namespace DOCGUARD_UNITY_ID {

using testing::parse;
using testing::request;

struct Judges {
  using Phases = phase::List<phase::JudgeRead>;
  std::vector<std::string>* seen;
  void judge_read(CommandPass& /*pass*/) { seen->push_back("judges"); }
};
struct Learns {
  using Phases = phase::List<phase::LearnRead>;
  std::vector<std::string>* seen;
  void learn_read(const ReadDocument& /*read*/) { seen->push_back("learns"); }
};
struct JudgesAndLearns {
  using Phases = phase::List<phase::JudgeRead, phase::LearnRead>;
  std::vector<std::string>* seen;
  void judge_read(CommandPass& /*pass*/) { seen->push_back("both judge"); }
  void learn_read(const ReadDocument& /*read*/) { seen->push_back("both learn"); }
};
// Takes part in judge_write for inserts only: a statement phase calls the overloads it has.
struct JudgesInserts {
  using Phases = phase::List<phase::JudgeWrite>;
  std::vector<std::string>* seen;
  void judge_write(CommandPass& /*pass*/, const InsertStatement& /*insert*/) {
    seen->push_back("insert judged");
  }
};

// Lists a phase whose method it misspells: the chain would not compile with it.
struct Misspelt {
  using Phases = phase::List<phase::JudgeRead>;
  void judge_reed(CommandPass& /*pass*/) {}
};
// Has a phase's method without listing the phase: the chain would not compile with it either.
struct Unlisted {
  using Phases = phase::List<>;
  void learn_read(const ReadDocument& /*read*/) {}
};
static_assert(!phase::kContractHolds<Misspelt>);
static_assert(!phase::kContractHolds<Unlisted>);
static_assert(phase::kContractHolds<Judges> && phase::kContractHolds<JudgesInserts>);
static_assert(phase::kContractHolds<GuardrailCheck> && phase::kContractHolds<ShapeCheck> &&
              phase::kContractHolds<SchemaCheck> && phase::kContractHolds<LookupCheck>);

TEST(CheckChainTest, APhaseMeetsTheChecksThatListItInTheChainsOrder) {
  std::vector<std::string> seen;
  Judges judges{&seen};
  Learns learns{&seen};
  JudgesAndLearns both{&seen};
  JudgesInserts inserts{&seen};
  CheckChain<JudgesAndLearns, Learns, Judges, JudgesInserts> chain(both, learns, judges, inserts);
  const auto message = request(R"({"find": "c", "$db": "d"})");
  const auto rules = parse("rules: []\n");
  Verdict verdict;
  const RequestContext ctx{"app", "peer"};
  CommandPass pass{message->cmd, ctx, *rules, verdict, nullptr, nullptr, "d", "c", nullptr};
  chain.run<phase::JudgeRead>(pass);
  chain.run<phase::LearnRead>(ReadDocument{});
  InsertStatement insert;
  DeleteStatement del(codec::BsonView{}, 0, nullptr);
  chain.run<phase::JudgeWrite>(pass, insert);
  chain.run<phase::JudgeWrite>(pass, del);  // no overload for deletes: not called
  EXPECT_EQ(seen, (std::vector<std::string>{"both judge", "judges", "both learn", "learns",
                                            "insert judged"}));
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

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
