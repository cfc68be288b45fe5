// The query guardrail against a corpus of the server's own planner facts: each row of
// planner_corpus.jsonl gives indexes as listIndexes lists them, a command as a driver sends it,
// and what a server running with notablescan does (served; collscan: refused with 291; or
// unknown: it depends on what listIndexes does not say, or the server fails the query for another
// reason, so docguard must pass it), with the server test or source it comes from. A row may add
// "docguard": the verdict docguard gives instead and why ("note"), only ever unknown where the
// server refuses (a pass, never a false refusal).
#include <bson/bson.h>
#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "docguard/codec/bson_elements.h"
#include "docguard/rules/engine.h"
#include "docguard/rules/engine_sinks.h"
#include "docguard/rules/index_catalog.h"
#include "docguard/rules/query_guardrail.h"
#include "rules_yaml.h"
#include "test_messages.h"

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

using testing::Bson;

struct Row {
  int line = 0;
  std::string json;
};

std::vector<Row> corpus() {
  std::ifstream in(std::string(DOCGUARD_SOURCE_DIR) +
                   "/tests/unit/rules/guardrail/planner_corpus.jsonl");
  std::vector<Row> rows;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!line.empty()) rows.push_back({n, line});
  }
  return rows;
}

IndexVerdict verdict_named(std::string_view name) {
  if (name == "served") return IndexVerdict::kServed;
  if (name == "collscan") return IndexVerdict::kUnserved;
  return IndexVerdict::kUnknown;
}

const char* name_of(IndexVerdict v) {
  switch (v) {
    case IndexVerdict::kServed:
      return "served";
    case IndexVerdict::kUnserved:
      return "collscan";
    case IndexVerdict::kUnknown:
      return "unknown";
  }
  return "?";
}

// A row's indexes as listIndexes lists them (the _id index added when the row leaves it out),
// its database and its command.
struct RowParts {
  std::string db = "test";
  std::vector<KnownIndex> listed;
  codec::BsonView command;
};

RowParts parts_of(const Bson& row) {
  RowParts out;
  bool listed_id = false;
  for (codec::BsonElements e(row.view()); e.next();) {
    if (e.key == "db") out.db = std::string(e.utf8());
    if (e.key == "command") out.command = e.container();
    if (e.key != "indexes") continue;
    for (codec::BsonElements spec(e.container()); spec.next();) {
      KnownIndex index = known_index_of(spec.container());
      listed_id |= index.name == "_id_";
      out.listed.push_back(std::move(index));
    }
  }
  if (!listed_id) out.listed.insert(out.listed.begin(), KnownIndex{"_id_", {{"_id", "1"}}});
  return out;
}

// A bulkWrite runs on admin and names its namespaces in nsInfo: the first one, and its first
// operation, are what a row's indexes and verdict are about.
struct BulkWriteTarget {
  std::string db, coll;
  codec::BsonView op;
};
std::optional<BulkWriteTarget> bulk_write_target(const codec::BsonView& command) {
  if (codec::first_key(command) != "bulkWrite") return std::nullopt;
  BulkWriteTarget out;
  for (codec::BsonElements e(command); e.next();) {
    if (e.key == "ops") {
      codec::BsonElements op(e.container());
      if (op.next()) out.op = op.container();
    } else if (e.key == "nsInfo") {
      codec::BsonElements info(e.container());
      if (!info.next()) continue;
      const std::string ns(codec::find_string(info.container(), "ns"));
      const size_t dot = ns.find('.');
      out.db = ns.substr(0, dot);
      out.coll = dot == std::string::npos ? "" : ns.substr(dot + 1);
    }
  }
  return out;
}

// The guardrail's unknowns, counted as the metrics count them.
class UnknownCounter final : public MeasurementSink {
 public:
  void on_guardrail_unknown(const NamespaceLabels& /*ns*/) override { ++unknown; }
  int unknown = 0;
};

// What a docguard in block mode does with the row's command arriving as traffic: the engine's
// whole pass, its fast paths included, against a complete list of the row's indexes.
IndexVerdict judge_row_as_traffic(const Bson& row) {
  RowParts p = parts_of(row);
  const Bson given(p.command);
  bson_t* body = bson_copy(given.get());
  bson_append_utf8(body, "$db", 3, p.db.c_str(), static_cast<int>(p.db.size()));
  codec::OpMsgBuilder builder(1, 0, 0);
  builder.body(body);
  const auto message = testing::Message::parse(builder.finish());
  bson_destroy(body);
  static const auto rules =
      testing::parse("rules:\n  - match: \"*\"\n    action: block\n    require_index: true\n");
  UnknownCounter unknowns;
  Engine engine(rules, &unknowns, nullptr);
  std::string db(message->cmd.database), coll(message->cmd.collection);
  if (const auto bulk = bulk_write_target(p.command)) {
    db = bulk->db;
    coll = bulk->coll;
  }
  engine.index_catalog().set(db, coll, std::move(p.listed), "listIndexes");
  const Verdict verdict = engine.inspect(message->cmd, RequestContext{"app", "peer"});
  for (const Violation& v : verdict.violations) {
    if (v.kind == RuleKind::kRequireIndex && v.action == Action::kBlock) {
      return IndexVerdict::kUnserved;
    }
  }
  return unknowns.unknown > 0 ? IndexVerdict::kUnknown : IndexVerdict::kServed;
}

// What docguard decides for one row, through the same functions the engine calls.
IndexVerdict judge_row(const Bson& row) {
  const codec::BsonView doc = row.view();
  std::string db = "test";
  std::vector<KnownIndex> listed;
  bool listed_id = false;
  codec::BsonView command;
  for (codec::BsonElements e(doc); e.next();) {
    if (e.key == "db") db = std::string(e.utf8());
    if (e.key == "command") command = e.container();
    if (e.key != "indexes") continue;
    for (codec::BsonElements spec(e.container()); spec.next();) {
      KnownIndex index = known_index_of(spec.container());
      listed_id |= index.name == "_id_";
      listed.push_back(std::move(index));
    }
  }
  if (!listed_id) listed.insert(listed.begin(), KnownIndex{"_id_", {{"_id", "1"}}});
  // The command as the engine sees it: described from an OP_MSG with its $db.
  const Bson given(command);
  bson_t* body = bson_copy(given.get());
  bson_append_utf8(body, "$db", 3, db.c_str(), static_cast<int>(db.size()));
  codec::OpMsgBuilder builder(1, 0, 0);
  builder.body(body);
  const auto message = testing::Message::parse(builder.finish());
  bson_destroy(body);
  const codec::CommandView& cmd = message->cmd;
  if (const auto bulk = bulk_write_target(command)) {
    IndexCatalog catalog;
    catalog.set(bulk->db, bulk->coll, std::move(listed), "listIndexes");
    const auto known = catalog.find(bulk->db, bulk->coll);
    return judge_plan(statement_parts(bulk->op), known.get(), nullptr).verdict;
  }
  if (exempt_namespace(cmd.database, cmd.collection)) return IndexVerdict::kServed;
  // The indexes as the engine has them: a complete list, stored by the catalog (which also
  // marks what the fast path may take).
  IndexCatalog catalog;
  catalog.set(cmd.database, cmd.collection, std::move(listed), "listIndexes");
  const auto known = catalog.find(cmd.database, cmd.collection);
  QueryParts parts;
  if (cmd.kind == codec::CommandKind::kUpdate || cmd.kind == codec::CommandKind::kDelete) {
    if (cmd.statements.empty()) return IndexVerdict::kServed;
    parts = statement_parts(cmd.statements.front());
  } else {
    parts = query_parts(cmd);
  }
  return judge_plan(parts, known.get(), nullptr).verdict;
}

TEST(PlannerCorpusTest, EveryRowAsTheServerDecides) {
  const std::vector<Row> rows = corpus();
  ASSERT_GE(rows.size(), 150u);
  size_t served = 0, refused = 0, unknown = 0, failures = 0;
  for (const Row& row : rows) {
    const Bson doc(row.json);
    const codec::BsonView view = doc.view();
    std::string expect = std::string(codec::find_string(view, "expect"));
    const std::string source = std::string(codec::find_string(view, "source"));
    ASSERT_FALSE(source.empty()) << "line " << row.line << " names no source";
    const std::string docguard = std::string(codec::find_string(view, "docguard"));
    if (!docguard.empty()) {
      // A documented difference may only pass where the server refuses.
      ASSERT_EQ(expect, "collscan") << "line " << row.line;
      ASSERT_EQ(docguard, "unknown") << "line " << row.line;
      expect = docguard;
    }
    const IndexVerdict got = judge_row(doc);
    // "unknown" rows depend on what docguard cannot see: it must pass them, served or unknown.
    const bool passes = expect == "unknown" && got != IndexVerdict::kUnserved;
    if (got != verdict_named(expect) && !passes) {
      ++failures;
      ADD_FAILURE() << "line " << row.line << " (" << source << "): expected " << expect
                    << ", docguard says " << name_of(got) << "\n  " << row.json;
    }
    // The same row as traffic through the engine: its fast paths must agree. What the server
    // refuses is refused; what it serves is never refused.
    const IndexVerdict traffic = judge_row_as_traffic(doc);
    const bool refused_as_traffic = traffic == IndexVerdict::kUnserved;
    if (refused_as_traffic != (verdict_named(expect) == IndexVerdict::kUnserved)) {
      ++failures;
      ADD_FAILURE() << "line " << row.line << " (" << source << "): expected " << expect
                    << ", docguard as traffic says " << name_of(traffic) << "\n  " << row.json;
    }
    served += got == IndexVerdict::kServed;
    refused += got == IndexVerdict::kUnserved;
    unknown += got == IndexVerdict::kUnknown;
  }
  std::printf("corpus: %zu rows, %zu served, %zu refused, %zu unknown, %zu differ\n", rows.size(),
              served, refused, unknown, failures);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
