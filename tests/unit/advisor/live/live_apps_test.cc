// Traffic findings name the client apps whose commands showed them, most active first, from
// the app names the rules engine labels; findings from what docguard read of the cluster name
// none.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
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

AdvisorSettings every_command() {
  AdvisorSettings s;
  s.live_sample_every = 1;
  return s;
}

class LiveAppsTest : public ::testing::Test {
 protected:
  LiveAppsTest()
      : advisor(every_command()),
        engine(settings::parse_rules(YAML::Node(), "<t>"), nullptr, &advisor) {}

  void send(const std::string& app, const std::string& body, int times = 1) {
    for (int i = 0; i < times; ++i) {
      auto m = request(body);
      engine.inspect(m->cmd, rules::RequestContext{.app_name = app, .peer = "127.0.0.1:1"});
    }
  }
  void push(const std::string& app, const std::string& coll, int times) {
    send(app, R"({"update": ")" + coll + R"(", "$db": "app", "updates": [{"q": {"_id": 1},
             "u": {"$push": {"comments": {"n": 1}}}}]})",
         times);
  }
  void regex_find(const std::string& app, const std::string& coll, int times) {
    send(app,
         R"({"find": ")" + coll +
             R"(", "$db": "app", "filter": {"title": {"$regex": "^a", "$options": "i"}}})",
         times);
  }
  const Finding* find(const std::vector<Finding>& all, const std::string& coll,
                      Finding::Kind kind) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const Finding& f) {
      return f.collection == coll && f.kind == kind;
    });
    return it == all.end() ? nullptr : &*it;
  }

  LiveAdvisor advisor;
  rules::Engine engine;
};

using Apps = std::vector<std::string>;

TEST_F(LiveAppsTest, TwoAppsOnOneCollectionAreNamedMostActiveFirst) {
  // The text report lists the collections with documents seen.
  send("cms", R"({"insert": "posts", "$db": "app", "documents": [{"_id": 1, "comments": []}]})");
  push("cms", "posts", 4);
  push("comments-service", "posts", 12);
  regex_find("search", "posts", 3);
  regex_find("search", "notes", 2);  // a collection only one app touches

  const auto all = advisor.findings();
  const Finding* unbounded = find(all, "posts", Finding::Kind::kUnboundedArray);
  ASSERT_NE(unbounded, nullptr);
  EXPECT_EQ(unbounded->apps, (Apps{"comments-service", "cms"}));
  // Reads and writes are told apart: the searches showed the regex, not the growing array.
  const Finding* regex = find(all, "posts", Finding::Kind::kCaseInsensitiveRegex);
  ASSERT_NE(regex, nullptr);
  EXPECT_EQ(regex->apps, Apps{"search"});
  const Finding* notes = find(all, "notes", Finding::Kind::kCaseInsensitiveRegex);
  ASSERT_NE(notes, nullptr);
  EXPECT_EQ(notes->apps, Apps{"search"});

  const std::string json = advisor.render(ReportFormat::kJson);
  EXPECT_NE(json.find(R"("apps":["comments-service","cms"])"), std::string::npos) << json;
  EXPECT_NE(advisor.render(ReportFormat::kText).find("apps:       comments-service, cms"),
            std::string::npos);
  EXPECT_NE(advisor.render(ReportFormat::kHtml).find("apps: comments-service, cms"),
            std::string::npos);
}

TEST_F(LiveAppsTest, AppsPastTheBoundOfANamespaceAreCountedTogether) {
  for (int i = 0; i < 8; ++i) push("app" + std::to_string(i), "posts", 2);
  push("late-a", "posts", 5);
  push("late-b", "posts", 5);
  const auto all = advisor.findings();
  const Finding* unbounded = find(all, "posts", Finding::Kind::kUnboundedArray);
  ASSERT_NE(unbounded, nullptr);
  EXPECT_EQ(unbounded->apps, (Apps{"_other", "app0", "app1", "app2", "app3"}));
}

TEST_F(LiveAppsTest, FindingsFromClusterFactsNameNoApps) {
  send("billing", R"({"insert": "orders", "$db": "app", "documents": [{"_id": 1}]})", 3);
  auto stored = std::make_unique<CollectionProfile>("app", "orders", every_command());
  CollectionMetadata m;
  m.db = "app";
  m.collection = "orders";
  m.known = true;
  m.type = "collection";
  m.source = "cluster";
  m.indexes_known = true;
  m.indexes.push_back(IndexSpec{.name = "_id_", .keys = {{"_id", "1"}}});
  stored->set_metadata(m);
  advisor.on_cluster_collection(std::move(stored), 1.0e9);

  const auto all = advisor.findings();
  const Finding* no_validator = find(all, "orders", Finding::Kind::kNoValidator);
  ASSERT_NE(no_validator, nullptr);
  EXPECT_EQ(no_validator->source, "metadata");
  EXPECT_TRUE(no_validator->apps.empty());
  EXPECT_NE(advisor.render(ReportFormat::kJson).find(R"("source":"metadata","apps":[])"),
            std::string::npos);
}

TEST_F(LiveAppsTest, WritesWithoutAValidatorNameTheirApps) {
  send("billing", R"({"insert": "orders", "$db": "app", "documents": [{"_id": 1}]})", 3);
  send("audit", R"({"find": "orders", "$db": "app", "filter": {"_id": 1}})", 5);
  const auto all = advisor.findings();
  const Finding* no_validator = find(all, "orders", Finding::Kind::kNoValidator);
  ASSERT_NE(no_validator, nullptr);
  EXPECT_EQ(no_validator->source, "traffic");
  EXPECT_EQ(no_validator->apps, Apps{"billing"});
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::advisor
