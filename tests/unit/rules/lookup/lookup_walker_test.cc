#include "docguard/rules/lookup_walker.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_messages.h"

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

using testing::Bson;

// Joins of the pipeline in {"p": [...]}, as "stage:from@depth".
std::vector<std::string> joins_of(const std::string& pipeline_json) {
  Bson doc("{\"p\": " + pipeline_json + "}");
  bson_iter_t it;
  EXPECT_TRUE(bson_iter_init_find(&it, doc.get(), "p"));
  std::vector<std::string> out;
  const codec::BsonView pipeline = codec::view_of(it);
  const uint32_t n = LookupWalker::walk(pipeline, [&](const Join& j) {
    out.push_back(std::string(j.stage) + ":" + std::string(j.from) + "@" + std::to_string(j.depth));
  });
  EXPECT_EQ(n, out.size());
  EXPECT_EQ(LookupWalker::may_contain_join(pipeline), !out.empty());
  return out;
}

using Joins = std::vector<std::string>;

TEST(LookupWalkerTest, NoJoins) {
  EXPECT_EQ(joins_of(R"([{"$match": {"a": 1}}, {"$group": {"_id": "$a"}}])"), Joins{});
  EXPECT_EQ(joins_of("[]"), Joins{});
}

TEST(LookupWalkerTest, TopLevelLookupAndGraphLookup) {
  EXPECT_EQ(joins_of(R"([{"$match": {}},
                        {"$lookup": {"from": "reviews", "localField": "_id",
                                     "foreignField": "pid", "as": "r"}},
                        {"$graphLookup": {"from": "people", "startWith": "$boss",
                                          "connectFromField": "boss", "connectToField": "_id",
                                          "as": "chain"}}])"),
            (Joins{"$lookup:reviews@0", "$graphLookup:people@0"}));
}

TEST(LookupWalkerTest, InsideFacet) {
  EXPECT_EQ(joins_of(R"([{"$facet": {"a": [{"$lookup": {"from": "x", "as": "x"}}],
                                    "b": [{"$match": {}}, {"$lookup": {"from": "y", "as": "y"}}]}}])"),
            (Joins{"$lookup:x@1", "$lookup:y@1"}));
}

TEST(LookupWalkerTest, InsideUnionWith) {
  EXPECT_EQ(joins_of(R"([{"$unionWith": {"coll": "archive",
                                        "pipeline": [{"$lookup": {"from": "z", "as": "z"}}]}},
                        {"$unionWith": "plain"}])"),
            (Joins{"$lookup:z@1"}));
}

TEST(LookupWalkerTest, NestedLookupPipelines) {
  EXPECT_EQ(joins_of(R"([{"$lookup": {"from": "orders", "as": "o", "pipeline": [
                          {"$lookup": {"from": "items", "as": "i", "pipeline": [
                            {"$facet": {"f": [{"$graphLookup": {"from": "cats", "as": "c"}}]}}]}}]}}])"),
            (Joins{"$lookup:orders@0", "$lookup:items@1", "$graphLookup:cats@3"}));
}

TEST(LookupWalkerTest, FederatedFromDocument) {
  EXPECT_EQ(joins_of(R"([{"$lookup": {"from": {"db": "other", "coll": "c"}, "as": "x"}}])"),
            (Joins{"$lookup:c@0"}));
}

TEST(LookupWalkerTest, DeepNestingIsBounded) {
  std::string p = R"([{"$lookup": {"from": "leaf", "as": "x"}}])";
  for (int i = 0; i < 30; ++i)
    p = R"([{"$lookup": {"from": "n", "as": "x", "pipeline": )" + p + "}}]";
  Joins joins = joins_of(p);
  EXPECT_EQ(joins.size(), LookupWalker::kMaxDepth + 1);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
