// The $jsonSchema corpus (tests/unit/schema/json_schema_corpus.jsonl) as traffic: each row's
// schema is a rule's json_schema in block mode, and its document arrives as an OP_MSG insert
// (its update as an update statement) through the engine, fast paths and all. The schema layer's
// own corpus test asks the compiled schema directly; this one asks what a docguard in front of
// the server would do with the same command: refuse exactly what the server refuses, with the
// server's errInfo.details, and count as unjudged what it cannot judge.
#include <bson/bson.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "docguard/rules/engine.h"
#include "test_messages.h"

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

using testing::Bson;
using testing::request;

struct CorpusRow {
  int line = 0;
  std::string text;
};

std::vector<CorpusRow> schema_corpus() {
  std::ifstream in(std::string(DOCGUARD_SOURCE_DIR) +
                   "/tests/unit/schema/json_schema_corpus.jsonl");
  std::vector<CorpusRow> rows;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (!text.empty() && text[0] == '{') rows.push_back({line, text});
  }
  return rows;
}

// Canonical Extended JSON keeps every BSON type (an Int64 stays an Int64, a Symbol a Symbol).
std::string canonical(const bson_t* b) {
  char* s = bson_as_canonical_extended_json(b, nullptr);
  std::string out = s != nullptr ? s : "{}";
  bson_free(s);
  return out;
}

std::string relaxed_json(const bson_t* b) {
  char* s = bson_as_relaxed_extended_json(b, nullptr);
  std::string out = s != nullptr ? s : "(invalid)";
  bson_free(s);
  return out;
}

bool sub_document(const bson_t* row, const char* key, bson_t* out) {
  bson_iter_t it;
  if (!bson_iter_init_find(&it, row, key) || !BSON_ITER_HOLDS_DOCUMENT(&it)) return false;
  uint32_t len;
  const uint8_t* data;
  bson_iter_document(&it, &len, &data);
  return bson_init_static(out, data, len);
}

// The document as a driver inserts it: an ObjectId _id first when it has none.
std::string inserted_json(const bson_t* document) {
  bson_t out = BSON_INITIALIZER;
  if (!bson_has_field(document, "_id")) {
    bson_oid_t oid;
    bson_oid_init(&oid, nullptr);
    BSON_APPEND_OID(&out, "_id", &oid);
  }
  bson_concat(&out, document);
  std::string json = canonical(&out);
  bson_destroy(&out);
  return json;
}

class UnjudgedCount : public MeasurementSink {
 public:
  void on_schema_unjudged(const NamespaceLabels&) override { ++unjudged; }
  int unjudged = 0;
};

// One engine per row: the row's schema as the only rule, in block mode, on corpus.c.
struct RowEngine {
  explicit RowEngine(const codec::BsonView& schema_view) {
    Rule rule;
    rule.id = "corpus";
    rule.match = "corpus.c";
    rule.action = Action::kBlock;
    rule.action_explicit = true;
    rule.json_schema = schema::JsonSchema::compile(schema_view);
    auto rules =
        std::make_shared<const RuleSet>(Action::kBlock, std::vector<Rule>{rule}, TrackingLimits{});
    engine = std::make_unique<Engine>(rules, &sink, nullptr);
  }
  Verdict inspect(const testing::Message& m) {
    return engine->inspect(m.cmd, RequestContext{"corpus-app", "127.0.0.1:5000"});
  }
  UnjudgedCount sink;
  std::unique_ptr<Engine> engine;
};

const Violation* schema_violation(const Verdict& verdict) {
  for (const Violation& v : verdict.violations) {
    if (v.kind == RuleKind::kJsonSchema) return &v;
  }
  return nullptr;
}

TEST(JsonSchemaCorpusAsTraffic, EveryRowThroughTheEngineAsTheServerJudgesIt) {
  const std::vector<CorpusRow> rows = schema_corpus();
  ASSERT_GE(rows.size(), 100u) << "the corpus file is missing or short";
  std::map<std::string, int> counts;
  // A thousand refusals would each log their line.
  const spdlog::level::level_enum level = spdlog::get_level();
  spdlog::set_level(spdlog::level::off);
  for (const CorpusRow& row : rows) {
    SCOPED_TRACE("json_schema_corpus.jsonl:" + std::to_string(row.line));
    const Bson b(row.text);
    bson_t schema, document, details, update;
    bson_iter_t field;
    ASSERT_TRUE(sub_document(b.get(), "schema", &schema));
    // A schema the server refuses to set never becomes a rule: the settings reader refuses it.
    if (bson_iter_init_find(&field, b.get(), "refused")) {
      ++counts["refused (not a rule)"];
      continue;
    }
    RowEngine row_engine({bson_get_data(&schema), schema.len});
    if (sub_document(b.get(), "update", &update)) {
      const bool upsert =
          bson_iter_init_find(&field, b.get(), "upsert") && bson_iter_as_bool(&field);
      ASSERT_TRUE(bson_iter_init_find(&field, b.get(), "judgement"));
      const std::string expected = bson_iter_utf8(&field, nullptr);
      const std::string body = std::string(R"({"update": "c", "$db": "corpus", "updates": [)") +
                               R"({"q": {}, "u": )" + canonical(&update) + R"(, "upsert": )" +
                               (upsert ? "true" : "false") + "}]}";
      const auto message = request(body);
      const Verdict verdict = row_engine.inspect(*message);
      const bool refused = verdict.any_block();
      const bool unjudged = row_engine.sink.unjudged > 0;
      const std::string got = refused ? "fail" : unjudged ? "unjudged" : "pass";
      EXPECT_EQ(got, expected) << row.text;
      ++counts["updates"];
      continue;
    }
    ASSERT_TRUE(sub_document(b.get(), "document", &document));
    ASSERT_TRUE(bson_iter_init_find(&field, b.get(), "valid") && BSON_ITER_HOLDS_BOOL(&field));
    const bool valid = bson_iter_bool(&field);
    const auto message =
        request(R"({"insert": "c", "$db": "corpus"})", "documents", {inserted_json(&document)});
    const Verdict verdict = row_engine.inspect(*message);
    EXPECT_EQ(verdict.any_block(), !valid) << row.text;
    ++counts[valid ? "inserts served" : "inserts refused"];
    const Violation* violation = schema_violation(verdict);
    if (!valid && violation != nullptr && sub_document(b.get(), "details", &details)) {
      const std::vector<uint8_t>& got = violation->schema_details().details;
      ASSERT_FALSE(got.empty()) << row.text;
      const Bson got_details(codec::BsonView{got.data(), static_cast<uint32_t>(got.size())});
      EXPECT_EQ(got_details.json(), relaxed_json(&details)) << row.text;
      ++counts["with the server's details"];
    }
  }
  spdlog::set_level(level);
  for (const auto& [what, n] : counts) std::printf("[ as traffic ] %s: %d\n", what.c_str(), n);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
