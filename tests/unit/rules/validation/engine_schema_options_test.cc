// What the server lets past its validator, and docguard's json_schema rules with it:
// bypassDocumentValidation (skipped and counted per app, unless the rule says honor_bypass:
// false), a validator file's validationLevel (strict, moderate, off) and validationAction
// (error, warn), and validators with query operators beside $jsonSchema (refused whole).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>

#include "docguard/rules/engine.h"
#include "docguard/settings/yaml_settings.h"
#include "test_messages.h"

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

using settings::ConfigError;
using settings::parse_rules;
using testing::Message;
using testing::request;

class Counting : public MeasurementSink {
 public:
  void on_schema_unjudged(const NamespaceLabels&) override { ++unjudged; }
  void on_schema_bypassed(const NamespaceLabels&, std::string_view app) override {
    ++bypassed[std::string(app)];
  }
  int unjudged = 0;
  std::map<std::string, int> bypassed;
};

std::string folder() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/docguard-schema-options-XXXXXX";
    return std::string(mkdtemp(tmpl));
  }();
  return dir;
}

// A validator file as `docguard validator` writes it, with the given options.
std::string validator_file(const std::string& name, const std::string& options,
                           const std::string& validator_extra = "") {
  std::ofstream f(folder() + "/" + name);
  f << R"({"collMod": "products", "validator": {"$jsonSchema": {"bsonType": "object", "required": ["_id", "name"], "properties": {"name": {"bsonType": "string"}}})"
    << validator_extra << "}" << options << "}";
  return name;
}

class EngineSchemaOptionsTest : public ::testing::Test {
 protected:
  void use(const std::string& rule_tail) {
    const std::string yaml =
        "rules:\n  - id: s\n    match: \"shop.products\"\n    action: block\n" + rule_tail;
    engine = std::make_unique<Engine>(parse_rules(YAML::Load(yaml), folder() + "/docguard.yaml"),
                                      &counts, nullptr);
  }
  Verdict inspect(const Message& m) {
    RequestContext ctx{"checkout", "127.0.0.1:5000"};
    return engine->inspect(m.cmd, ctx);
  }
  Verdict insert(const std::string& doc, bool bypass = false) {
    return inspect(*request(std::string(R"({"insert": "products", "$db": "shop")") +
                                (bypass ? R"(, "bypassDocumentValidation": true})" : "}"),
                            "documents", {doc}));
  }
  Verdict update(const std::string& u) {
    return inspect(
        *request(R"({"update": "products", "$db": "shop", "updates": [{"q": {"_id": 1}, "u": )" +
                 u + "}]}"));
  }
  Counting counts;
  std::unique_ptr<Engine> engine;
};

constexpr const char* kInline = "    json_schema: { required: [name] }\n";

TEST_F(EngineSchemaOptionsTest, BypassDocumentValidationSkipsTheSchemaAndIsCountedPerApp) {
  use(kInline);
  EXPECT_TRUE(insert(R"({"_id": 1})", true).violations.empty());
  EXPECT_EQ(counts.bypassed["checkout"], 1);
  EXPECT_EQ(insert(R"({"_id": 1})").violations.size(), 1u);
  auto bypassing_update = request(
      R"({"update": "products", "$db": "shop", "bypassDocumentValidation": true, "updates": [{"q": {"_id": 1}, "u": {"x": 1}}]})");
  EXPECT_TRUE(inspect(*bypassing_update).violations.empty());
  EXPECT_EQ(counts.bypassed["checkout"], 2);
  // A staging gate that wants to see them: honor_bypass: false.
  use(std::string(kInline) + "    honor_bypass: false\n");
  EXPECT_EQ(insert(R"({"_id": 1})", true).violations.size(), 1u);
}

TEST_F(EngineSchemaOptionsTest, ModerateRefusesInvalidInsertsButNotUpdates) {
  use("    json_schema_file: " +
      validator_file("moderate.json",
                     R"(, "validationLevel": "moderate", "validationAction": "error")") +
      "\n");
  EXPECT_EQ(insert(R"({"_id": 1, "name": 5})").violations.size(), 1u);
  EXPECT_TRUE(insert(R"({"name": "a"})").violations.empty()) << "the new _id is required";
  EXPECT_TRUE(update(R"({"$set": {"name": 5}})").violations.empty());
  EXPECT_TRUE(update(R"({"name": 5})").violations.empty());
  EXPECT_EQ(counts.unjudged, 2);
  // strict (the server's default) refuses both.
  use("    json_schema_file: " + validator_file("strict.json", R"(, "validationLevel": "strict")") +
      "\n");
  EXPECT_EQ(update(R"({"$set": {"name": 5}})").violations.size(), 1u);
  EXPECT_EQ(update(R"({"name": 5})").violations.size(), 1u);
}

TEST_F(EngineSchemaOptionsTest, WarnNeverRefusesAndOffJudgesNothing) {
  use("    json_schema_file: " + validator_file("warn.json", R"(, "validationAction": "warn")") +
      "\n");
  Verdict v = insert(R"({"_id": 1, "name": 5})");
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(v.violations[0].action, Action::kWarn);
  EXPECT_TRUE(v.blocked_statements.empty());
  use("    json_schema_file: " + validator_file("off.json", R"(, "validationLevel": "off")") +
      "\n");
  EXPECT_TRUE(insert(R"({"_id": 1, "name": 5})").violations.empty());
}

TEST_F(EngineSchemaOptionsTest, ErrorAndLogRefusesAsErrorDoes) {
  use("    json_schema_file: " +
      validator_file("logged.json", R"(, "validationAction": "errorAndLog")") + "\n");
  Verdict v = insert(R"({"_id": 1, "name": 5})");
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_EQ(v.violations[0].action, Action::kBlock);
}

std::string error_of(const std::string& rule_tail) {
  try {
    parse_rules(YAML::Load("rules:\n  - match: shop.products\n" + rule_tail),
                folder() + "/docguard.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(EngineSchemaOptionsTest, QueryOperatorsBesideTheSchemaAreRefusedWithTheirKey) {
  const std::string file = validator_file("operators.json", "", R"(, "status": {"$in": ["a"]})");
  const std::string e = error_of("    json_schema_file: " + file + "\n");
  EXPECT_NE(e.find("docguard.yaml:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("validator.status"), std::string::npos) << e;
  const std::string inline_error = error_of(
      "    json_schema:\n      $jsonSchema: { required: [a] }\n      status: { $in: [a] }\n");
  EXPECT_NE(inline_error.find("docguard.yaml:5:"), std::string::npos) << inline_error;
  EXPECT_NE(inline_error.find("json_schema.status"), std::string::npos) << inline_error;
  EXPECT_NE(error_of("    json_schema_file: " +
                     validator_file("level.json", R"(, "validationLevel": "sometimes")") + "\n")
                .find("validationLevel must be one of strict, moderate, off"),
            std::string::npos);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
