// The $jsonSchema corpus (schema/json_schema_corpus.jsonl): one row per line, each a schema, a
// document, whether the server accepts it, for some refusals the server's errInfo.details, and
// the server file or jstest the row comes from. Every row is judged as the server judges an
// insert of the document (one without _id gets an ObjectId first, as the jstests' inserts do),
// and explained when it names details. Two other kinds of row: a schema the server refuses to
// set (`refused`: a part of docguard's message), and an operator update judged without the stored
// document (`update`, `upsert`, and `judgement`: pass, fail or unjudged).
#include <bson/bson.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "docguard/schema/json_schema.h"

namespace docguard::schema {
namespace {

struct Row {
  int line = 0;
  std::string text;
};

std::vector<Row> corpus_rows() {
  std::ifstream in(std::string(DOCGUARD_SOURCE_DIR) +
                   "/tests/unit/schema/json_schema_corpus.jsonl");
  std::vector<Row> rows;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (!text.empty() && text[0] == '{') rows.push_back({line, text});
  }
  return rows;
}

std::string relaxed(const bson_t* b) {
  char* s = bson_as_relaxed_extended_json(b, nullptr);
  std::string out = s != nullptr ? s : "(invalid)";
  bson_free(s);
  return out;
}

// The document as inserted: an ObjectId _id first when it has none.
bson_t* as_inserted(const bson_t* document) {
  bson_t* out = bson_new();
  if (!bson_has_field(document, "_id")) {
    bson_oid_t oid;
    bson_oid_init(&oid, nullptr);
    BSON_APPEND_OID(out, "_id", &oid);
  }
  bson_concat(out, document);
  return out;
}

// A sub-document of `row` by key, or false.
bool child(const bson_t* row, const char* key, bson_t* out) {
  bson_iter_t it;
  if (!bson_iter_init_find(&it, row, key) || !BSON_ITER_HOLDS_DOCUMENT(&it)) return false;
  uint32_t len;
  const uint8_t* data;
  bson_iter_document(&it, &len, &data);
  return bson_init_static(out, data, len);
}

TEST(JsonSchemaCorpus, EveryRowAsTheServerJudgesIt) {
  const std::vector<Row> rows = corpus_rows();
  ASSERT_GE(rows.size(), 100u) << "the corpus file is missing or short";
  int explained = 0, refused = 0, updates = 0;
  for (const Row& row : rows) {
    SCOPED_TRACE("json_schema_corpus.jsonl:" + std::to_string(row.line));
    bson_error_t error;
    bson_t* b = bson_new_from_json(reinterpret_cast<const uint8_t*>(row.text.data()),
                                   static_cast<ssize_t>(row.text.size()), &error);
    ASSERT_NE(b, nullptr) << error.message;
    bson_t schema, document, details, update;
    bson_iter_t valid, field;
    ASSERT_TRUE(child(b, "schema", &schema));
    const codec::BsonView schema_view{bson_get_data(&schema), schema.len};
    if (bson_iter_init_find(&field, b, "refused")) {
      const std::string part = bson_iter_utf8(&field, nullptr);
      try {
        (void)JsonSchema::compile(schema_view);
        ADD_FAILURE() << "compiled, but the server refuses it: " << row.text;
      } catch (const JsonSchemaError& e) {
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
      }
      ++refused;
      bson_destroy(b);
      continue;
    }
    const auto compiled = JsonSchema::compile(schema_view);
    if (child(b, "update", &update)) {
      const bool upsert = bson_iter_init_find(&field, b, "upsert") && bson_iter_as_bool(&field);
      ASSERT_TRUE(bson_iter_init_find(&field, b, "judgement"));
      const std::string expected = bson_iter_utf8(&field, nullptr);
      const UpdateJudgement got =
          compiled->judge_update({bson_get_data(&update), update.len}, upsert, nullptr);
      const char* names[] = {"pass", "fail", "unjudged"};
      EXPECT_EQ(names[static_cast<int>(got)], expected) << row.text;
      ++updates;
      bson_destroy(b);
      continue;
    }
    ASSERT_TRUE(child(b, "document", &document) && bson_iter_init_find(&valid, b, "valid") &&
                BSON_ITER_HOLDS_BOOL(&valid));
    const bool expected = bson_iter_bool(&valid);
    bson_t* inserted = as_inserted(&document);
    const codec::BsonView judged{bson_get_data(inserted), inserted->len};
    EXPECT_EQ(compiled->matches(judged), expected) << row.text;
    if (!expected && child(b, "details", &details)) {
      bson_t out = BSON_INITIALIZER;
      compiled->explain(judged, &out, "details");
      bson_t got;
      ASSERT_TRUE(child(&out, "details", &got));
      EXPECT_EQ(relaxed(&got), relaxed(&details)) << row.text;
      bson_destroy(&out);
      ++explained;
    }
    bson_destroy(inserted);
    bson_destroy(b);
  }
  std::printf(
      "[ corpus   ] %zu rows, %d with the server's details, %d schemas refused, %d updates\n",
      rows.size(), explained, refused, updates);
}

}  // namespace
}  // namespace docguard::schema
