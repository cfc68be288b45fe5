// Rule ids and keys, hit counters that survive a reload, and candidate rules judged in a dry run.
#include "docguard/rules/rule_hits.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <thread>

#include "docguard/rules/engine.h"
#include "docguard/rules/rule_set.h"
#include "docguard/settings/yaml_settings.h"
#include "rules_yaml.h"
#include "test_messages.h"
#include "tracked_documents.h"

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

using testing::error_of;
using testing::parse;

std::unique_ptr<testing::Message> insert_with_tags(int n, int id = 1) {
  return testing::request(
      R"({"insert": "items", "$db": "shop"})", "documents",
      {"{\"_id\": " + std::to_string(id) + ", \"tags\": " + testing::int_array(n) + "}"});
}

std::unique_ptr<testing::Message> push_tags(int id, int elements) {
  std::string each = testing::int_array(elements);
  return testing::request(R"({"update": "items", "$db": "shop"})", "updates",
                          {"{\"q\": {\"_id\": " + std::to_string(id) +
                           "}, \"u\": {\"$push\": {\"tags\": {\"$each\": " + each + "}}}}"});
}

// The rule whose id (or key, for a rule without an id) is `name` in a status document.
std::string rule_entry(const std::string& status, const std::string& list,
                       const std::string& name) {
  const size_t start = status.find("\"" + list + "\":[");
  if (start == std::string::npos) return "";
  const size_t at = status.find(name, start);
  if (at == std::string::npos) return "";
  const size_t open = status.rfind('{', at);
  return status.substr(open, status.find('}', status.find("\"last_hit\"", at)) - open + 1);
}

TEST(RuleIdTest, IdsAreParsedAndMustBeUniqueInTheirList) {
  auto rules = parse(R"(
rules:
  - {id: orders-size, match: 'shop.orders', max_document_bytes: 1KiB}
  - {match: 'shop.*', max_array_length: 3}
candidate_rules:
  - {id: orders-size, match: 'shop.orders', max_document_bytes: 512}
)");
  ASSERT_EQ(rules->rules().size(), 2u);
  EXPECT_EQ(rules->rules()[0].id, "orders-size");
  EXPECT_EQ(rules->rules()[1].id, "");
  ASSERT_NE(rules->candidates(), nullptr);
  EXPECT_EQ(rules->candidates()->rules()[0].id, "orders-size");  // a revision of the live rule

  const std::string dup = error_of(R"(rules:
  - id: a
    match: 'x.*'
    max_array_length: 3
  - id: a
    match: 'y.*'
    max_array_length: 3
)");
  EXPECT_NE(dup.find("test.yaml:5"), std::string::npos) << dup;
  EXPECT_NE(dup.find("rules[1].id"), std::string::npos) << dup;
  EXPECT_NE(dup.find("duplicate id 'a' (first used by the rule on line 2)"), std::string::npos)
      << dup;
  EXPECT_NE(error_of("candidate_rules: [{id: b, match: x}, {id: b, match: y}]")
                .find("candidate_rules[1].id"),
            std::string::npos);
  EXPECT_NE(error_of("rules: [{id: '', match: x}]").find("must not be empty"), std::string::npos);
  EXPECT_NE(error_of("candidate_rules: {match: x}").find("expected a list of rules"),
            std::string::npos);
  EXPECT_EQ(parse("candidate_rules: []")->candidates(), nullptr);
}

TEST(RuleKeyTest, KeysAreBuiltFromMatchAndScope) {
  auto rules = parse(R"(
rules:
  - {match: 'shop.*', max_array_length: 3}
  - {match: 'shop.*', apps: [checkout, 'legacy-*'], users: [loader@admin],
     clients: ['10.0.0.0/8', 'fd00::/8', '192.168.1.7'], max_document_bytes: 1KiB}
  - {match: 'shop.*', max_document_bytes: 2KiB}
)");
  EXPECT_EQ(rule_key(rules->rules()[0]), "match=shop.*");
  EXPECT_EQ(rule_key(rules->rules()[1]),
            "match=shop.* apps=checkout,legacy-* users=loader@admin "
            "clients=10.0.0.0/8,fd00::/8,192.168.1.7/32");
  RuleHitsTable table(*rules, nullptr);
  EXPECT_EQ(table.key(0), "match=shop.*");
  EXPECT_EQ(table.key(2), "match=shop.* #2");  // same key: told apart by order
  EXPECT_NE(table.at(0), table.at(2));
}

TEST(RuleHitsTest, CountedPerRuleAndActionAndShownInStatus) {
  Engine engine(parse(R"(
mode: warn
rules:
  - {id: tags-warn, match: 'shop.*', max_array_length: 3}
  - {id: tags-block, match: 'shop.*', action: block, max_array_length: 5}
)"),
                nullptr, nullptr);
  engine.inspect(insert_with_tags(4)->cmd, {"app", "127.0.0.1:1"});
  engine.inspect(insert_with_tags(4)->cmd, {"app", "127.0.0.1:1"});
  engine.inspect(insert_with_tags(9)->cmd, {"app", "127.0.0.1:1"});
  const std::string status = engine.status_json();
  const std::string warn = rule_entry(status, "rules", "tags-warn");
  EXPECT_NE(warn.find(R"("line":4,"hits":{"warn":2,"block":0},"last_hit":"20)"), std::string::npos)
      << status;
  const std::string block = rule_entry(status, "rules", "tags-block");
  EXPECT_NE(block.find(R"("hits":{"warn":0,"block":1})"), std::string::npos) << status;
  EXPECT_NE(status.find(R"("candidate_rules":[])"), std::string::npos) << status;
}

TEST(RuleHitsTest, ReloadKeepsCountsOfUnchangedIdsAndKeys) {
  // One limit kind per rule, so that one insert is a hit for each.
  Engine engine(parse(R"(
rules:
  - {id: kept, match: 'shop.*', max_array_length: 3}
  - {id: renamed, match: 'shop.*', max_document_bytes: 10}
  - {match: 'shop.items', max_nesting_depth: 1}
  - {id: removed, match: 'shop.*', array_length: {tags: 3}}
)"),
                nullptr, nullptr);
  auto hits = [&](const std::string& name) {
    const std::string entry = rule_entry(engine.status_json(), "rules", name);
    const size_t at = entry.find("\"warn\":");
    return at == std::string::npos ? -1 : std::stoi(entry.substr(at + 7));
  };
  engine.inspect(insert_with_tags(4)->cmd, {"app", "127.0.0.1:1"});
  EXPECT_EQ(hits("\"kept\""), 1);
  EXPECT_EQ(hits("\"renamed\""), 1);
  EXPECT_EQ(hits("match=shop.items"), 1);
  EXPECT_EQ(hits("\"removed\""), 1);

  engine.reload(parse(R"(
rules:
  - {id: kept, match: 'shop.*', max_array_length: 3, max_nesting_depth: 50}
  - {id: new-name, match: 'shop.*', max_document_bytes: 10}
  - {match: 'shop.items', max_nesting_depth: 1}
)"));
  // Same id with changed bounds, same key: the counts go on. A new id is a new rule; a rule no
  // longer in the file is no longer listed.
  EXPECT_EQ(hits("\"kept\""), 1);
  EXPECT_EQ(hits("\"new-name\""), 0);
  EXPECT_EQ(hits("match=shop.items"), 1);
  const std::string status = engine.status_json();
  EXPECT_EQ(status.find("\"renamed\""), std::string::npos) << status;
  EXPECT_EQ(status.find("\"removed\""), std::string::npos) << status;
  engine.inspect(insert_with_tags(4, 2)->cmd, {"app", "127.0.0.1:1"});
  EXPECT_EQ(hits("\"kept\""), 2);
  EXPECT_EQ(hits("\"new-name\""), 1);
  EXPECT_EQ(hits("match=shop.items"), 2);

  // A changed match without an id is another rule: its counts start again.
  engine.reload(parse("rules: [{match: 'shop.item?', max_nesting_depth: 1}]"));
  EXPECT_EQ(hits("match=shop.item?"), 0);
  EXPECT_EQ(hits("\"kept\""), -1);
}

// Each thread keeps its own copy of the rules in force and takes it again after a reload: two
// engines used in turn on one thread each judge by their own rules, and a reload made on
// another thread is in force for this one's next command.
TEST(RuleHitsTest, EachEngineJudgesByItsOwnRulesAndAReloadOnAnotherThreadIsSeen) {
  Engine strict(parse("rules: [{id: strict, match: 'shop.*', max_array_length: 3}]"), nullptr,
                nullptr);
  Engine lenient(parse("rules: [{id: lenient, match: 'shop.*', max_array_length: 100}]"), nullptr,
                 nullptr);
  for (int round = 0; round < 3; ++round) {
    EXPECT_FALSE(
        strict.inspect(insert_with_tags(4)->cmd, {"app", "127.0.0.1:1"}).violations.empty());
    EXPECT_TRUE(
        lenient.inspect(insert_with_tags(4)->cmd, {"app", "127.0.0.1:1"}).violations.empty());
  }
  std::thread([&] {
    lenient.reload(parse("rules: [{id: lenient, match: 'shop.*', max_array_length: 2}]"));
  }).join();
  EXPECT_FALSE(
      lenient.inspect(insert_with_tags(4)->cmd, {"app", "127.0.0.1:1"}).violations.empty());
  EXPECT_FALSE(strict.inspect(insert_with_tags(4)->cmd, {"app", "127.0.0.1:1"}).violations.empty());
}

class CandidateRecorder : public MeasurementSink {
 public:
  void on_violation(const NamespaceLabels&, std::string_view rule, Action action,
                    std::string_view app) override {
    std::lock_guard lock(mutex);
    ++real[std::string(rule) + ":" + action_name(action) + ":" + std::string(app)];
  }
  void on_candidate_violation(const NamespaceLabels&, std::string_view rule, Action would,
                              std::string_view app) override {
    std::lock_guard lock(mutex);
    ++candidate[std::string(rule) + ":" + action_name(would) + ":" + std::string(app)];
  }
  void on_array_length(const NamespaceLabels&, std::string_view, double) override {
    std::lock_guard lock(mutex);
    ++array_lengths;
  }
  std::mutex mutex;
  std::map<std::string, int> real, candidate;
  int array_lengths = 0;
};

TEST(CandidateRulesTest, NeverBlockAndAreCountedApart) {
  CandidateRecorder recorder;
  Engine engine(parse(R"(
mode: warn
rules:
  - {match: 'shop.*', max_array_length: 100}
candidate_rules:
  - {id: strict-tags, match: 'shop.*', action: block, max_array_length: 3}
  - {match: 'shop.*', apps: [reports], max_array_length: 2}
)"),
                &recorder, nullptr);
  Verdict v = engine.inspect(insert_with_tags(4)->cmd, {"checkout", "127.0.0.1:1"});
  EXPECT_TRUE(v.violations.empty());
  EXPECT_FALSE(v.any_block());
  v = engine.inspect(insert_with_tags(4, 2)->cmd, {"reports", "127.0.0.1:1"});
  EXPECT_TRUE(v.violations.empty());
  EXPECT_FALSE(v.any_block());
  engine.inspect(insert_with_tags(1, 3)->cmd, {"checkout", "127.0.0.1:1"});

  EXPECT_TRUE(recorder.real.empty());
  EXPECT_EQ(recorder.candidate["max_array_length:block:checkout"], 1);
  EXPECT_EQ(recorder.candidate["max_array_length:block:reports"], 1);
  EXPECT_EQ(recorder.array_lengths, 3);  // measured once per document, not once per pass

  const auto verdicts = engine.candidate_verdicts();
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_EQ(verdicts[0].id, "strict-tags");
  ASSERT_EQ(verdicts[0].apps.size(), 2u);
  EXPECT_EQ(verdicts[0].apps[0].app, "checkout");
  EXPECT_EQ(verdicts[0].apps[0].would_block, 1u);
  EXPECT_EQ(verdicts[1].key, "match=shop.* apps=reports");
  EXPECT_TRUE(verdicts[1].apps.empty());  // the block rule decided the limit for reports

  const std::string status = engine.status_json();
  EXPECT_NE(
      rule_entry(status, "candidate_rules", "strict-tags").find(R"("hits":{"warn":0,"block":2})"),
      std::string::npos)
      << status;
  // The collection's own counts know nothing of candidates.
  EXPECT_EQ(status.find("\"violations\":{\"max_array_length\""), std::string::npos) << status;
}

TEST(CandidateRulesTest, EveryStatementOfAnOrderedBatchIsJudged) {
  // Nothing was refused, so every statement ran: each one that breaks the candidate counts.
  CandidateRecorder recorder;
  Engine engine(parse("candidate_rules: [{match: 'shop.*', action: block, max_array_length: 3}]"),
                &recorder, nullptr);
  auto m = testing::request(R"({"insert": "items", "$db": "shop", "ordered": true})", "documents",
                            {R"({"_id": 1, "tags": [1, 2, 3, 4]})", R"({"_id": 2, "tags": [1]})",
                             R"({"_id": 3, "tags": [1, 2, 3, 4]})"});
  EXPECT_FALSE(engine.inspect(m->cmd, {"app", "127.0.0.1:1"}).any_block());
  EXPECT_EQ(recorder.candidate["max_array_length:block:app"], 2);
}

TEST(CandidateRulesTest, TrackedArraysAreJudgedWithoutGrowingTwice) {
  CandidateRecorder recorder;
  Engine engine(parse(R"(
mode: warn
rules: []
candidate_rules:
  - {id: tags, match: 'shop.*', action: block, array_length: {tags: 5}}
)"),
                &recorder, nullptr);
  // The tracker follows the array although only a candidate rule bounds it.
  engine.inspect(insert_with_tags(3)->cmd, {"app", "127.0.0.1:1"});
  EXPECT_EQ(tracked_documents(engine), 1u);
  Verdict v = engine.inspect(push_tags(1, 2)->cmd, {"app", "127.0.0.1:1"});  // 5: fine
  EXPECT_TRUE(v.violations.empty());
  EXPECT_TRUE(recorder.candidate.empty());
  v = engine.inspect(push_tags(1, 1)->cmd, {"app", "127.0.0.1:1"});  // 6: past the bound
  EXPECT_TRUE(v.violations.empty());
  EXPECT_FALSE(v.any_block());
  // Lengths added up from writes are estimates: warn at most, as for real rules.
  EXPECT_EQ(recorder.candidate["tracked_array_length:warn:app"], 1);
}

TEST(CandidateRulesTest, ReloadPromotesACandidate) {
  CandidateRecorder recorder;
  Engine engine(parse(R"(
rules: []
candidate_rules:
  - {id: strict-tags, match: 'shop.*', action: block, max_array_length: 3}
)"),
                &recorder, nullptr);
  EXPECT_FALSE(engine.inspect(insert_with_tags(4)->cmd, {"app", "127.0.0.1:1"}).any_block());
  engine.reload(parse(R"(
rules:
  - {id: strict-tags, match: 'shop.*', action: block, max_array_length: 3}
)"));
  EXPECT_TRUE(engine.inspect(insert_with_tags(4, 2)->cmd, {"app", "127.0.0.1:1"}).any_block());
  EXPECT_TRUE(engine.candidate_verdicts().empty());
  EXPECT_EQ(recorder.candidate.size(), 1u);
  EXPECT_EQ(recorder.real["max_array_length:block:app"], 1);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
