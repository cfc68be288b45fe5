// The live advisor's traffic query shapes from the workload ledger, as the proxy wires them: while
// the ledger is on, the unindexed-query finding counts every query (the ledger's exact counts)
// whatever the advisor's own sampling, and the advisor builds no shapes per request; with the
// ledger off, the advisor counts its sampled commands as before.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "docguard/advisor/live_advisor.h"
#include "docguard/rules/engine.h"
#include "docguard/settings/yaml_settings.h"
#include "test_messages.h"

namespace docguard::advisor {
namespace {
namespace DOCGUARD_UNITY_ID {

using testing::request;

AdvisorSettings one_in_four() {
  AdvisorSettings s;
  s.live_sample_every = 4;
  s.unindexed_query_min = 2;  // sampled units: 8 queries in all
  s.report_missing_validator = false;
  return s;
}

class LiveLedgerShapesTest : public ::testing::Test {
 protected:
  LiveLedgerShapesTest()
      : advisor(one_in_four()),
        engine(settings::parse_rules(YAML::Node(), "<t>"), nullptr, &advisor) {
    advisor.set_workload_ledger(&engine.workload());
    // The collection's index list: the _id index alone.
    auto m = request(R"({"listIndexes": "orders", "$db": "app"})");
    const testing::Bson reply(
        R"({"cursor": {"id": 0, "ns": "app.orders", "firstBatch": [
              {"v": 2, "key": {"_id": 1}, "name": "_id_"}]}, "ok": 1})");
    advisor.on_catalog_reply(m->cmd, reply.view());
  }

  void find_by_status(int times) {
    for (int i = 0; i < times; ++i) {
      auto m = request(R"({"find": "orders", "$db": "app", "filter": {"status": "open"}})");
      engine.inspect(m->cmd, rules::RequestContext{});
    }
  }
  std::vector<Finding> unindexed() const {
    std::vector<Finding> out;
    for (Finding& f : advisor.findings()) {
      if (f.collection == "orders" && f.kind == Finding::Kind::kUnindexedQuery) {
        out.push_back(std::move(f));
      }
    }
    return out;
  }

  LiveAdvisor advisor;
  rules::Engine engine;
};

TEST_F(LiveLedgerShapesTest, WithTheLedgerOnEveryQueryIsCountedExactly) {
  find_by_status(7);  // under the threshold of 8 in all
  EXPECT_TRUE(unindexed().empty());
  find_by_status(3);
  const std::vector<Finding> found = unindexed();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].field, "status");
  EXPECT_NE(found[0].evidence.find("ran 10 times;"), std::string::npos) << found[0].evidence;
  EXPECT_EQ(found[0].evidence.find("sampled"), std::string::npos) << found[0].evidence;
}

TEST_F(LiveLedgerShapesTest, WithTheLedgerOffTheAdvisorCountsItsSample) {
  engine.workload().set_max_shapes(0);
  find_by_status(12);  // 3 of them sampled
  const std::vector<Finding> found = unindexed();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].evidence.find("ran 3 times in the commands sampled (1 in 4"),
            std::string::npos)
      << found[0].evidence;
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::advisor
