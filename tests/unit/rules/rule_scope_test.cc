// Rules scoped to apps, users and client addresses: parsing, matching, how scoped and unscoped
// rules combine, and what the engine does with a connection's scope.
#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "addresses.h"
#include "docguard/rules/client_scope.h"
#include "docguard/rules/engine.h"
#include "docguard/rules/rule_set.h"
#include "docguard/settings/yaml_settings.h"
#include "rules_yaml.h"
#include "test_messages.h"

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

using testing::error_of;
using testing::parse;

using testing::cidr;
using testing::ip;

TEST(ClientScopeTest, EveryKeyARuleHasMustMatch) {
  const IpAddress inside = ip("10.0.0.7");
  const IpAddress outside = ip("192.168.0.7");
  RuleScope apps{{"checkout-*", "billing"}, {}, {}};
  EXPECT_TRUE(scope_matches(apps, {"checkout-api", "", nullptr}));
  EXPECT_TRUE(scope_matches(apps, {"billing", "", nullptr}));
  EXPECT_FALSE(scope_matches(apps, {"billing-worker", "", nullptr}));
  EXPECT_FALSE(scope_matches(apps, {"", "", nullptr}));
  EXPECT_TRUE(scope_matches(RuleScope{{"*"}, {}, {}}, {"", "", nullptr}));

  RuleScope users{{}, {"alice", "*@reporting", "svc-*@admin"}, {}};
  EXPECT_TRUE(scope_matches(users, {"", "alice@admin", nullptr}));  // a bare name: any db
  EXPECT_TRUE(scope_matches(users, {"", "alice@shop", nullptr}));
  EXPECT_TRUE(scope_matches(users, {"", "bob@reporting", nullptr}));
  EXPECT_TRUE(scope_matches(users, {"", "svc-etl@admin", nullptr}));
  EXPECT_FALSE(scope_matches(users, {"", "svc-etl@shop", nullptr}));
  EXPECT_FALSE(scope_matches(users, {"", "bob@admin", nullptr}));
  EXPECT_FALSE(scope_matches(users, {"", "", nullptr}));
  // Not authenticated: no user, which not even "*" matches.
  EXPECT_FALSE(scope_matches(RuleScope{{}, {"*"}, {}}, {"app", "", nullptr}));
  // A name holding '@' (an email address) matches whole or with its database.
  RuleScope email{{}, {"ann@example.com"}, {}};
  EXPECT_TRUE(scope_matches(email, {"", "ann@example.com@$external", nullptr}));

  RuleScope clients{{}, {}, {cidr("10.0.0.0/8"), cidr("fd00::/8")}};
  EXPECT_TRUE(scope_matches(clients, {"", "", &inside}));
  EXPECT_FALSE(scope_matches(clients, {"", "", &outside}));
  EXPECT_FALSE(scope_matches(clients, {"", "", nullptr}));

  RuleScope all{{"checkout"}, {"alice"}, {cidr("10.0.0.0/8")}};
  EXPECT_TRUE(scope_matches(all, {"checkout", "alice@admin", &inside}));
  EXPECT_FALSE(scope_matches(all, {"checkout", "alice@admin", &outside}));
  EXPECT_FALSE(scope_matches(all, {"checkout", "", &inside}));
  EXPECT_FALSE(scope_matches(all, {"reports", "alice@admin", &inside}));
  EXPECT_TRUE(scope_matches(RuleScope{}, {"", "", nullptr}));
}

TEST(RuleScopeConfigTest, ParsesScopeKeys) {
  auto rules = parse(R"(
rules:
  - match: "shop.*"
    apps: ["checkout-*", billing]
    users: reporter@admin
    clients: ["10.0.0.0/8", "fd00::/8", "192.168.1.10"]
    max_array_length: 10
  - match: "*"
    max_array_length: 100
tracking:
  max_apps: 5
)");
  ASSERT_EQ(rules->rules().size(), 2u);
  const RuleScope& s = rules->rules()[0].scope;
  EXPECT_EQ(s.apps, (std::vector<std::string>{"checkout-*", "billing"}));
  EXPECT_EQ(s.users, (std::vector<std::string>{"reporter@admin"}));
  ASSERT_EQ(s.clients.size(), 3u);
  EXPECT_EQ(s.clients[0].prefix, 104);
  EXPECT_EQ(s.clients[2].prefix, 128);
  EXPECT_TRUE(rules->rules()[1].scope.empty());
  EXPECT_TRUE(rules->has_scoped_rules());
  EXPECT_EQ(rules->tracking().max_apps, 5u);
  EXPECT_EQ(parse("rules: [{match: '*'}]")->tracking().max_apps, 64u);
}

TEST(RuleScopeConfigTest, ErrorsNameTheLine) {
  EXPECT_EQ(error_of("rules:\n  - match: '*'\n    clients: ['10.0.0.0/8', '10.1.2.3/8']\n"),
            "test.yaml:3:29: key 'rules[0].clients[1]': '10.1.2.3/8' has address bits set past "
            "its prefix length (expected an address or a range like 10.0.0.0/8)");
  EXPECT_EQ(error_of("rules:\n  - match: '*'\n\n    clients: [office]\n"),
            "test.yaml:4:15: key 'rules[0].clients[0]': 'office' is not an IPv4 or IPv6 address "
            "(expected an address or a range like 10.0.0.0/8)");
  EXPECT_EQ(error_of("rules:\n  - match: '*'\n    apps: [a, '']\n"),
            "test.yaml:3:15: key 'rules[0].apps[1]': must not be empty (use \"*\" for any)");
  EXPECT_EQ(error_of("rules:\n  - match: '*'\n    users: ['@admin']\n"),
            "test.yaml:3:13: key 'rules[0].users[0]': expected a user name glob, written 'name' "
            "or 'name@db', got '@admin'");
  const std::string empty = error_of("rules:\n  - match: '*'\n    apps: []\n");
  EXPECT_NE(empty.find("test.yaml:3:"), std::string::npos) << empty;
  EXPECT_NE(empty.find("at least one entry"), std::string::npos) << empty;
  const std::string nested = error_of("rules:\n  - match: '*'\n    users: [{name: a}]\n");
  EXPECT_NE(nested.find("test.yaml:3:13: key 'rules[0].users[0]'"), std::string::npos) << nested;
  const std::string bound = error_of("tracking:\n  max_apps: 0\n");
  EXPECT_NE(bound.find("test.yaml:2:"), std::string::npos) << bound;
}

TEST(RuleScopeResolveTest, WithoutScopedRulesEveryConnectionHasScopeZero) {
  auto rules = parse("rules: [{match: '*', max_array_length: 5}]");
  EXPECT_FALSE(rules->has_scoped_rules());
  EXPECT_EQ(rules->scope_of({"any", "alice@admin", nullptr}), 0u);
}

TEST(RuleScopeResolveTest, ConnectionsTheSameRulesApplyToShareAnId) {
  auto rules = parse(R"(
rules:
  - {match: '*', apps: [checkout], max_array_length: 5}
  - {match: '*', apps: ['check*'], max_array_length: 6}
  - {match: '*', users: [alice], max_array_length: 7}
)");
  const uint32_t none = rules->scope_of({"reports", "", nullptr});
  EXPECT_EQ(none, 0u);
  const uint32_t checkout = rules->scope_of({"checkout", "", nullptr});
  EXPECT_NE(checkout, 0u);
  EXPECT_EQ(rules->scope_of({"checkout", "bob@admin", nullptr}), checkout);
  const uint32_t checker = rules->scope_of({"checker", "", nullptr});
  EXPECT_NE(checker, checkout);
  EXPECT_NE(rules->scope_of({"checkout", "alice@admin", nullptr}), checkout);
  EXPECT_EQ(rules->scope_of({"checker", "", nullptr}), checker);
}

TEST(RuleScopeResolveTest, ScopedAndUnscopedCombineStrongestThenSmallest) {
  auto rules = parse(R"(
mode: warn
rules:
  - {match: 'shop.*', max_array_length: 100}
  - {match: 'shop.*', apps: [checkout], action: block, max_array_length: 50}
  - {match: 'shop.*', apps: [checkout], max_array_length: 20}
  - {match: 'shop.*', users: [loader], max_array_length: 1000, action: block}
  - {match: 'other.*', apps: [checkout], action: block, max_document_bytes: 10}
)");
  const NamespaceLimits everyone = rules->resolve("shop", "items");
  EXPECT_EQ(everyone.limit(RuleKind::kMaxArrayLength).bounds.size(), 1u);
  EXPECT_EQ(everyone.limit(RuleKind::kMaxArrayLength).exceeded(60), nullptr);
  EXPECT_EQ(everyone.limit(RuleKind::kMaxArrayLength).exceeded(101)->action, Action::kWarn);

  const NamespaceLimits checkout = rules->resolve("shop", "items", rules->scope_of({"checkout"}));
  ASSERT_EQ(checkout.limit(RuleKind::kMaxArrayLength).bounds.size(), 3u);
  const Bound* at_30 = checkout.limit(RuleKind::kMaxArrayLength).exceeded(30);
  EXPECT_EQ(at_30->action, Action::kWarn);  // past the scoped warn (20) only
  EXPECT_EQ(at_30->value, 20);
  const Bound* at_60 = checkout.limit(RuleKind::kMaxArrayLength).exceeded(60);
  EXPECT_EQ(at_60->action, Action::kBlock);  // the scoped block beats both warns
  EXPECT_EQ(at_60->value, 50);
  EXPECT_EQ(checkout.limit(RuleKind::kMaxArrayLength).exceeded(200)->value, 50);
  EXPECT_TRUE(checkout.limit(RuleKind::kMaxDocumentBytes).empty());  // that rule is for other.*

  // The unscoped warn still applies to the loader, below its own looser block.
  const NamespaceLimits loader =
      rules->resolve("shop", "items", rules->scope_of({"", "loader@admin", nullptr}));
  EXPECT_EQ(loader.limit(RuleKind::kMaxArrayLength).exceeded(150)->action, Action::kWarn);
  EXPECT_EQ(loader.limit(RuleKind::kMaxArrayLength).exceeded(1001)->action, Action::kBlock);
}

TEST(RuleScopeResolveTest, ArraysAreTrackedWhenAnyScopeBoundsThem) {
  auto rules = parse(R"(
rules:
  - {match: 'shop.items', apps: [checkout], array_length: {tags: 3}}
  - {match: 'shop.other', max_document_bytes: 1KiB}
)");
  EXPECT_TRUE(rules->resolve("shop", "items").tracks_arrays);
  EXPECT_TRUE(rules->resolve("shop", "items").array_length_by_path.empty());
  EXPECT_FALSE(rules->resolve("shop", "other").tracks_arrays);
}

// ---------------------------------------------------------------------------------------------
// The engine with scoped rules

class AppRecorder : public MeasurementSink {
 public:
  void on_command(const NamespaceLabels&, std::string_view command, std::string_view app) override {
    std::lock_guard lock(mutex);
    ++commands_by_app[std::string(app) + ":" + std::string(command)];
  }
  void on_violation(const NamespaceLabels&, std::string_view, Action action,
                    std::string_view app) override {
    std::lock_guard lock(mutex);
    ++by_app[std::string(app) + ":" + action_name(action)];
  }
  std::mutex mutex;
  std::map<std::string, int> by_app;
  std::map<std::string, int> commands_by_app;
};

constexpr const char* kScopedRules = R"(
mode: warn
rules:
  - {match: 'shop.*', apps: [checkout], action: block, max_array_length: 3}
  - {match: 'shop.*', apps: ['report*'], action: warn, max_array_length: 3}
  - {match: 'shop.*', users: ['loader@admin'], action: block, max_array_length: 3}
  - {match: 'shop.*', clients: ['10.0.0.0/8'], action: block, max_array_length: 3}
)";

std::unique_ptr<testing::Message> insert_of_four() {
  return testing::request(R"({"insert": "items", "$db": "shop"})", "documents",
                          {R"({"_id": 1, "tags": [1, 2, 3, 4]})"});
}

TEST(ScopedEngineTest, EachConnectionGetsItsOwnRules) {
  AppRecorder recorder;
  Engine engine(parse(kScopedRules), &recorder, nullptr);
  auto m = insert_of_four();
  auto verdict_for = [&](RequestContext ctx) { return engine.inspect(m->cmd, ctx); };

  Verdict checkout = verdict_for({"checkout", "127.0.0.1:1"});
  ASSERT_EQ(checkout.violations.size(), 1u);
  EXPECT_TRUE(checkout.any_block());
  Verdict reports = verdict_for({"reports-nightly", "127.0.0.1:1"});
  ASSERT_EQ(reports.violations.size(), 1u);
  EXPECT_FALSE(reports.any_block());
  EXPECT_TRUE(verdict_for({"storefront", "127.0.0.1:1"}).violations.empty());
  EXPECT_TRUE(verdict_for({"storefront", "127.0.0.1:1", "loader@shop"}).violations.empty());
  EXPECT_TRUE(verdict_for({"storefront", "127.0.0.1:1", "loader@admin"}).any_block());
  EXPECT_TRUE(verdict_for({"storefront", "10.1.1.1:1"}).any_block());
  EXPECT_TRUE(verdict_for({"storefront", "::ffff:10.1.1.1:1"}).any_block());
  EXPECT_TRUE(verdict_for({"storefront", "unknown"}).violations.empty());

  EXPECT_EQ(recorder.by_app["checkout:block"], 1);
  EXPECT_EQ(recorder.by_app["reports-nightly:warn"], 1);
  EXPECT_EQ(recorder.by_app["storefront:block"], 3);
  EXPECT_NE(
      engine.status_json().find(
          R"j("top_users":[{"user":"(not authenticated)","violations":4},{"user":"loader@admin","violations":1}])j"),
      std::string::npos)
      << engine.status_json();
}

TEST(ScopedEngineTest, AConnectionScopeIsFoundAgainWhenItsIdentityOrTheRulesChange) {
  Engine engine(parse(kScopedRules), nullptr, nullptr);
  auto m = insert_of_four();
  ConnectionScopeId scope("127.0.0.1:4000");
  std::string user;
  auto inspect = [&] {
    return engine.inspect(m->cmd, {"storefront", "127.0.0.1:4000", user, &scope});
  };
  EXPECT_FALSE(inspect().any_block());
  user = "loader@admin";
  EXPECT_FALSE(inspect().any_block());  // remembered until told
  scope.forget();
  EXPECT_TRUE(inspect().any_block());
  user.clear();  // logout
  scope.forget();
  EXPECT_FALSE(inspect().any_block());
  user = "loader@admin";
  scope.forget();
  EXPECT_TRUE(inspect().any_block());
  // A reload: the scope is found again under the new rules.
  engine.reload(
      parse("rules: [{match: 'shop.*', users: [nobody], action: block, max_array_length: 3}]"));
  EXPECT_TRUE(inspect().violations.empty());
}

TEST(ScopedEngineTest, AppLabelsAreBoundedPerProcess) {
  AppRecorder recorder;
  Engine engine(parse("mode: warn\nrules: [{match: '*', max_array_length: 3}]\n"
                      "tracking: {max_apps: 3}\n"),
                &recorder, nullptr);
  auto m = insert_of_four();
  std::vector<std::string> apps;
  apps.reserve(10);
  for (int i = 0; i < 10; ++i) apps.push_back("app-" + std::to_string(i));
  for (const auto& app : apps) engine.inspect(m->cmd, {app, "127.0.0.1:1"});
  engine.inspect(m->cmd, {"app-1", "127.0.0.1:1"});  // known: keeps its label
  engine.inspect(m->cmd, {"", "127.0.0.1:1"});       // no name: no label value, not counted
  EXPECT_EQ(recorder.by_app.size(), 5u);
  EXPECT_EQ(recorder.by_app["app-0:warn"], 1);
  EXPECT_EQ(recorder.by_app["app-1:warn"], 2);
  EXPECT_EQ(recorder.by_app["app-2:warn"], 1);
  EXPECT_EQ(recorder.by_app["_other:warn"], 7);
  EXPECT_EQ(recorder.by_app[":warn"], 1);
  // Commands carry the same labels.
  EXPECT_EQ(recorder.commands_by_app.size(), 5u);
  EXPECT_EQ(recorder.commands_by_app["app-1:insert"], 2);
  EXPECT_EQ(recorder.commands_by_app["_other:insert"], 7);
  EXPECT_EQ(recorder.commands_by_app[":insert"], 1);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
