// json_schema rules judge the document the server validates: an insert without _id gets its
// ObjectId first, a replacement keeps the stored _id, and errInfo always names the _id.
#include <gtest/gtest.h>

#include <map>

#include "docguard/rules/engine.h"
#include "docguard/settings/yaml_settings.h"
#include "test_messages.h"

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

using settings::parse_rules;
using testing::Message;
using testing::request;

class EngineSchemaPostImageTest : public ::testing::Test {
 protected:
  void use(const std::string& schema_yaml) {
    const std::string yaml =
        "rules:\n  - id: s\n    match: \"shop.products\"\n    action: block\n"
        "    json_schema:\n" +
        schema_yaml;
    engine = std::make_unique<Engine>(parse_rules(YAML::Load(yaml), "test.yaml"), nullptr, nullptr);
  }
  Verdict inspect(const Message& m) {
    RequestContext ctx{"app", "127.0.0.1:5000"};
    return engine->inspect(m.cmd, ctx);
  }
  Verdict insert(const std::string& doc) {
    return inspect(*request(R"({"insert": "products", "$db": "shop"})", "documents", {doc}));
  }
  Verdict replace(const std::string& q, const std::string& u) {
    return inspect(*request(R"({"update": "products", "$db": "shop", "updates": [{"q": )" + q +
                            R"(, "u": )" + u + "}]}"));
  }
  std::unique_ptr<Engine> engine;
};

// What `docguard validator` writes: _id required, no other fields allowed.
constexpr const char* kGenerated = R"(      bsonType: object
      required: [_id, name]
      additionalProperties: false
      properties:
        _id: { bsonType: objectId }
        name: { bsonType: string }
)";

TEST_F(EngineSchemaPostImageTest, AnInsertWithoutIdIsJudgedWithTheObjectIdTheServerGivesIt) {
  use(kGenerated);
  EXPECT_TRUE(insert(R"({"name": "a"})").violations.empty());
  Verdict v = insert(R"({"name": 5})");
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_FALSE(v.violations[0].failing_id.empty()) << "failingDocumentId: the new ObjectId";
  // additionalProperties: false without _id among the properties refuses it, as the server does.
  use("      additionalProperties: false\n      properties: { name: {} }\n");
  EXPECT_EQ(insert(R"({"name": "a"})").violations.size(), 1u);
  use("      maxProperties: 1\n");
  EXPECT_EQ(insert(R"({"name": "a"})").violations.size(), 1u);
  use("      properties: { _id: { bsonType: string } }\n");
  EXPECT_EQ(insert(R"({"name": "a"})").violations.size(), 1u);
}

TEST_F(EngineSchemaPostImageTest, AReplacementWithoutIdKeepsTheStoredId) {
  use(kGenerated);
  EXPECT_TRUE(replace(R"({"name": "a"})", R"({"name": "b"})").violations.empty());
  EXPECT_TRUE(replace(R"({"_id": {"$oid": "65a000000000000000000001"}})", R"({"name": "b"})")
                  .violations.empty());
  // The query's _id is the stored one: its type is judged.
  Verdict v = replace(R"({"_id": 7})", R"({"name": "b"})");
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_FALSE(v.violations[0].failing_id.empty());
  // Unknown stored _id: errInfo says null (the writer fills it in), the judgement stands.
  v = replace(R"({"name": "a"})", R"({"name": 1})");
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_TRUE(v.violations[0].failing_id.empty());
}

TEST_F(EngineSchemaPostImageTest, AFailureThatMayComeFromAnUnknownStoredIdIsNotRefused) {
  // The stored _id of a replacement by name is unknown: an int one passes on the server, so
  // the stand-in ObjectId's failure is not certain.
  use("      properties: { _id: { bsonType: int }, name: { bsonType: string } }\n");
  EXPECT_TRUE(replace(R"({"name": "a"})", R"({"name": "b"})").violations.empty());
  // A failure of another property is certain whatever the _id.
  EXPECT_EQ(replace(R"({"name": "a"})", R"({"name": 1})").violations.size(), 1u);
  // With the _id in the query it is known, and judged.
  EXPECT_EQ(replace(R"({"_id": {"$oid": "65a000000000000000000001"}})", R"({"name": "b"})")
                .violations.size(),
            1u);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
