// Shapes of hostile queries: a field or operator name of megabytes is cut inside the shape
// text (marked, at a UTF-8 character boundary), never copied whole into the shape the guardrail
// judges and the workload ledger keeps, and a cut shape text matches no `allow` entry.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "docguard/rules/engine.h"
#include "docguard/rules/query_guardrail.h"
#include "docguard/rules/query_shape.h"
#include "docguard/settings/yaml_settings.h"
#include "test_messages.h"

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

using testing::Bson;
using testing::request;

// A find on shop.orders with `filter` (JSON).
std::string find(const std::string& filter) {
  return R"({"find": "orders", "$db": "shop", "filter": )" + filter + "}";
}

// The shape text and whether it was cut.
std::pair<std::string, bool> shape_text(const std::string& body) {
  auto m = request(body);
  std::string out;
  const bool cut = append_shape_text(out, query_parts(m->cmd));
  return {out, cut};
}

bool is_utf8(const std::string& s) { return bson_utf8_validate(s.data(), s.size(), false); }

TEST(HostileShapeText, AWholeShapeIsNotCut) {
  const auto [text, cut] = shape_text(find(R"({"status": "open", "total": {"$gt": 5}})"));
  EXPECT_EQ(text, "{status: ?, total: {$gt: ?}}");
  EXPECT_FALSE(cut);
}

TEST(HostileShapeText, AHugeFieldNameIsCutInsideIt) {
  const std::string field(4 * 1024 * 1024, 'f');
  const auto [text, cut] = shape_text(find(R"({")" + field + R"(": 1})"));
  EXPECT_TRUE(cut);
  EXPECT_LE(text.size(), 512u + 16);
  EXPECT_EQ(text.substr(0, 4), "{fff");
  EXPECT_NE(text.find("..."), std::string::npos);
}

TEST(HostileShapeText, AHugeOperatorNameIsCutInsideIt) {
  const std::string op = "$" + std::string(2 * 1024 * 1024, 'o');
  const auto [text, cut] = shape_text(find(R"({"total": {")" + op + R"(": 1}})"));
  EXPECT_TRUE(cut);
  EXPECT_LE(text.size(), 512u + 16);
  EXPECT_EQ(text.substr(0, 12), "{total: {$oo");
}

TEST(HostileShapeText, TheCutEndsOnACharacterBoundary) {
  // 3-byte characters: wherever the limit falls, no character is split.
  std::string field;
  for (int i = 0; i < 400; ++i) field += "€";
  for (const char* prefix : {"", "a", "ab"}) {
    const auto [text, cut] = shape_text(find(R"({")" + std::string(prefix) + field + R"(": 1})"));
    EXPECT_TRUE(cut);
    EXPECT_TRUE(is_utf8(text)) << prefix;
  }
}

TEST(HostileShapeText, SortAndProjectionKeysAreCutToo) {
  const std::string key(100 * 1024, 'k');
  const auto [text, cut] = shape_text(R"({"find": "orders", "$db": "shop", "filter": {"a": 1},
      "sort": {")" + key + R"(": 1}, "projection": {")" +
                                      key + R"(": 1}})");
  EXPECT_TRUE(cut);
  EXPECT_LE(text.size(), 512u + 32);
}

TEST(HostileQueryShape, HugeNamesAreNotKept) {
  const std::string op = "$" + std::string(4 * 1024 * 1024, 'x');
  Bson filter("{\"total\": {\"" + op + "\": 1}}");
  const QueryShape with_op = query_shape(filter.get(), nullptr);
  ASSERT_EQ(with_op.skipped.size(), 1u);
  EXPECT_LE(with_op.skipped[0].size(), 64u);

  Bson long_field("{\"" + std::string(6 * 1024 * 1024, 'f') + "\": 1, \"status\": 1}");
  const QueryShape with_field = query_shape(long_field.get(), nullptr);
  EXPECT_EQ(with_field.equality, std::vector<std::string>{"status"});
  EXPECT_EQ(with_field.skipped, std::vector<std::string>{"(too large)"});
}

TEST(HostileQueryShape, ManyFieldsStopAtTheShapesBound) {
  std::string filter = "{";
  for (int i = 0; i < 200; ++i) {
    filter += (i ? ", \"" : "\"") + std::string(400, 'a') + std::to_string(i) + "\": 1";
  }
  Bson f(filter + "}");
  const QueryShape shape = query_shape(f.get(), nullptr);
  size_t bytes = 0;
  for (const auto& e : shape.equality) bytes += e.size();
  EXPECT_LE(bytes, 4096u);
  EXPECT_FALSE(shape.equality.empty());
  EXPECT_EQ(shape.skipped, std::vector<std::string>{"(too large)"});
}

class HostileGuardrail : public ::testing::Test {
 protected:
  void use(const std::string& yaml) {
    engine = std::make_unique<Engine>(settings::parse_rules(YAML::Load(yaml), "test.yaml"), nullptr,
                                      nullptr);
    engine->index_catalog().set("shop", "orders", {{"_id_", {{"_id", "1"}}}}, "test");
  }
  Verdict inspect(const std::string& body) {
    auto m = request(body);
    return engine->inspect(m->cmd, RequestContext{"ci", "127.0.0.1:5000"});
  }
  std::unique_ptr<Engine> engine;
};

TEST_F(HostileGuardrail, AnAllowEntryNeverMatchesACutShape) {
  const std::string field(4096, 'f');
  const std::string body = find(R"({")" + field + R"(": 1})");
  const auto [cut_text, cut] = shape_text(body);
  ASSERT_TRUE(cut);
  // An entry naming exactly the cut text: it names no query in full, so it allows nothing.
  use(R"(
rules:
  - match: "shop.*"
    action: block
    require_index: true
    allow:
      - {shape: ")" +
      cut_text + R"(", owner: team-x, until: 2999-12-31}
      - {shape: "{customer: ?}", owner: team-x, until: 2999-12-31}
)");
  const Verdict refused = inspect(body);
  EXPECT_TRUE(refused.block_command);
  ASSERT_EQ(refused.violations.size(), 1u);
  EXPECT_EQ(refused.violations[0].unindexed_query().shape, cut_text);
  // An entry naming a whole shape still applies.
  EXPECT_FALSE(inspect(find(R"({"customer": 1})")).any_block());
}

TEST_F(HostileGuardrail, TheWorkloadLedgerKeepsItsBoundPerShape) {
  use("rules:\n  - match: 'shop.*'\n    require_index: true\n    action: block\n");
  for (int i = 0; i < 8; ++i) {
    const std::string op = "$" + std::string(512 * 1024, static_cast<char>('a' + i));
    const Verdict v = inspect(find(R"({"total": {")" + op + R"(": 1}})"));
    WorkloadLedger::record(v.workload, {100, 0, true});
  }
  const WorkloadSnapshot s = engine->workload_report();
  ASSERT_FALSE(s.shapes.empty());
  for (const WorkloadShape& w : s.shapes) {
    size_t bytes = w.info->shape.size() + w.info->command.size();
    for (const auto& e : w.info->fields.skipped) bytes += e.size();
    for (const auto& e : w.info->fields.equality) bytes += e.size();
    for (const auto& e : w.info->fields.range) bytes += e.size();
    EXPECT_LE(bytes, 4096u) << w.info->shape;
  }
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
