// What the engine learns from outside client writes: documents docguard read from the database
// itself (introspection), and the replies to catalog commands.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "docguard/rules/engine.h"
#include "docguard/settings/yaml_settings.h"
#include "test_messages.h"
#include "tracked_documents.h"

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

using settings::parse_rules;

using testing::Bson;
using testing::int_array;
using testing::request;

class CatalogAdvice : public AdviceSink {
 public:
  void on_catalog_reply(const codec::CommandView& request, const codec::BsonView&) override {
    commands.emplace_back(request.name);
  }
  std::vector<std::string> commands;
};

// Counts the pushes whose resulting length could not be judged.
class UnknownLengths : public MeasurementSink {
 public:
  void on_length_unknown(const NamespaceLabels& /*ns*/) override { ++count; }
  int count = 0;
};

const RequestContext kCtx{"test-app", "127.0.0.1:5000"};

constexpr const char* kTagsBound = R"(
rules:
  - match: "shop.*"
    action: block
    array_length: { tags: 1000 }
)";

class EngineStoredTest : public ::testing::Test {
 protected:
  void use(const std::string& yaml) {
    engine =
        std::make_unique<Engine>(parse_rules(YAML::Load(yaml), "test.yaml"), &unknown, &advice);
  }
  Verdict push(int id, int elements) {
    auto m = request(R"({"update": "items", "$db": "shop", "updates": [{"q": {"_id": )" +
                     std::to_string(id) + R"(}, "u": {"$push": {"tags": {"$each": )" +
                     int_array(elements) + "}}}}]}");
    return engine->inspect(m->cmd, kCtx);
  }
  CatalogAdvice advice;
  UnknownLengths unknown;
  std::unique_ptr<Engine> engine;
};

TEST_F(EngineStoredTest, PushOntoALongStoredArrayIsBlocked) {
  use(kTagsBound);
  Bson stored(R"({"_id": 7, "tags": )" + int_array(950) + "}");
  engine->learn_stored_document("shop", "items", stored.view());
  EXPECT_EQ(tracked_documents(*engine), 1u);
  Verdict v = push(7, 100);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(v.violations[0].kind, RuleKind::kTrackedArrayLength);
  EXPECT_EQ(v.violations[0].measured, 1050);
  EXPECT_EQ(v.violations[0].action, Action::kBlock);
  EXPECT_TRUE(v.any_block());
  // Refused, so the tracker did not count it: a push that fits passes.
  EXPECT_TRUE(push(7, 40).violations.empty());
}

TEST_F(EngineStoredTest, LengthsFromWritesAloneStillOnlyWarn) {
  use(kTagsBound);
  auto insert = request(R"({"insert": "items", "$db": "shop", "documents": [{"_id": 8, "tags": )" +
                        int_array(950) + "}]}");
  EXPECT_TRUE(engine->inspect(insert->cmd, kCtx).violations.empty());
  Verdict v = push(8, 100);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(v.violations[0].action, Action::kWarn);
  EXPECT_FALSE(v.any_block());
}

TEST_F(EngineStoredTest, PushesOntoDocumentsNeverSeenAreToldAsUnknownLengths) {
  use(kTagsBound);
  Bson stored(R"({"_id": 7, "tags": [1, 2, 3]})");
  engine->learn_stored_document("shop", "items", stored.view());
  EXPECT_TRUE(push(7, 5).violations.empty());
  EXPECT_EQ(unknown.count, 0);  // a known length: judged
  EXPECT_TRUE(push(9, 5).violations.empty());
  EXPECT_EQ(unknown.count, 1);  // never seen: the push alone was judged
  auto by_sku = request(R"({"update": "items", "$db": "shop", "updates": [{"q": {"sku": "a"},
                            "u": {"$push": {"tags": 1}}}]})");
  EXPECT_TRUE(engine->inspect(by_sku->cmd, kCtx).violations.empty());
  EXPECT_EQ(unknown.count, 2);  // not named by its _id: no length to look up
  auto scalar = request(R"({"update": "items", "$db": "shop", "updates": [{"q": {"sku": "a"},
                            "u": {"$set": {"n": 1}}}]})");
  (void)engine->inspect(scalar->cmd, kCtx);
  EXPECT_EQ(unknown.count, 2);  // no push: nothing to judge
}

TEST_F(EngineStoredTest, StoredDocumentsOfUnboundedNamespacesAreNotRemembered) {
  use("rules:\n  - match: 'other.*'\n    array_length: { tags: 10 }\n");
  Bson stored(R"({"_id": 7, "tags": [1, 2, 3]})");
  engine->learn_stored_document("shop", "items", stored.view());
  EXPECT_EQ(tracked_documents(*engine), 0u);
}

TEST_F(EngineStoredTest, OnlySuccessfulCatalogRepliesReachTheAdviceSink) {
  use(kTagsBound);
  auto create = request(R"({"createIndexes": "items", "$db": "shop",
                            "indexes": [{"key": {"sku": 1}, "name": "sku_1"}]})");
  auto ok = request(R"({"ok": 1})");
  auto failed = request(R"({"ok": 0, "code": 13, "errmsg": "not authorized"})");
  engine->observe_catalog_reply(create->cmd, failed->msg);
  EXPECT_TRUE(advice.commands.empty());
  engine->observe_catalog_reply(create->cmd, ok->msg);
  ASSERT_EQ(advice.commands.size(), 1u);
  EXPECT_EQ(advice.commands[0], "createIndexes");
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
