// The workload ledger: the space-saving table's bound and exactness, the shape hash against the
// shape text, and what the engine records per shape, app and verdict.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "docguard/rules/engine.h"
#include "docguard/rules/workload_ledger.h"
#include "docguard/rules/workload_sketch.h"
#include "docguard/settings/yaml_settings.h"
#include "test_messages.h"

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

using settings::parse_rules;

using testing::request;

std::shared_ptr<const ShapeInfo> info(uint64_t key) {
  auto i = std::make_shared<ShapeInfo>();
  i->shape = "shape " + std::to_string(key);
  return i;
}

// One operation of `key` taking `micros`, as the engine and the reply would count it.
void add(WorkloadSketch& sketch, uint64_t key, uint64_t micros) {
  SketchEntry* e = sketch.find(key);
  if (e == nullptr) e = &sketch.admit(key, info(key));
  ++e->stats.count;
  e->stats.micros += micros;
  WorkloadSketch::charge(*e, 1, micros);
}

uint64_t total_count(const WorkloadSketch& sketch) {
  uint64_t n = sketch.overflow().count;
  for (const SketchEntry& e : sketch.entries()) n += e.stats.count;
  return n;
}

TEST(WorkloadSketch, CountsExactlyWhileUnderItsCapacity) {
  WorkloadSketch sketch(10);
  for (uint64_t key = 1; key <= 10; ++key) {
    for (uint64_t i = 0; i < key; ++i) add(sketch, key * 7919, 100);
  }
  ASSERT_EQ(sketch.size(), 10u);
  for (uint64_t key = 1; key <= 10; ++key) {
    const SketchEntry* e = sketch.find(key * 7919);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->stats.count, key);
    EXPECT_EQ(e->stats.micros, key * 100);
    EXPECT_EQ(e->inherited, 0u);
  }
  EXPECT_EQ(sketch.overflow().count, 0u);
  EXPECT_EQ(sketch.overflow().micros, 0u);
}

TEST(WorkloadSketch, TenThousandShapesStayWithinTheBoundAndKeepTheHeavyHitters) {
  constexpr size_t kCapacity = 100;
  WorkloadSketch sketch(kCapacity);
  const std::vector<uint64_t> heavy = {11, 22, 33, 44, 55};
  uint64_t operations = 0, micros = 0;
  for (uint64_t i = 0; i < 10'000; ++i) {
    add(sketch, 1'000'000 + i, 10);  // a shape seen once
    ++operations;
    micros += 10;
    if (i % 10 == 0) {
      for (uint64_t key : heavy) {
        add(sketch, key, 1'000);
        ++operations;
        micros += 1'000;
      }
    }
    ASSERT_LE(sketch.size(), kCapacity);
  }
  EXPECT_EQ(sketch.size(), kCapacity);
  EXPECT_EQ(total_count(sketch), operations);  // nothing lost: entries + overflow
  uint64_t kept_micros = sketch.overflow().micros;
  for (const SketchEntry& e : sketch.entries()) kept_micros += e.stats.micros;
  EXPECT_EQ(kept_micros, micros);
  EXPECT_GT(sketch.overflow().count, 9'000u);
  for (uint64_t key : heavy) {
    const SketchEntry* e = sketch.find(key);
    ASSERT_NE(e, nullptr) << key;
    EXPECT_EQ(e->stats.count, 1'000u) << "a heavy shape is never replaced, so counted exactly";
  }
  // The index finds every entry after all those replacements, and nothing else.
  std::set<uint64_t> keys;
  for (const SketchEntry& e : sketch.entries()) {
    EXPECT_EQ(sketch.find(e.key), &e);
    keys.insert(e.key);
  }
  EXPECT_EQ(keys.size(), kCapacity);
  EXPECT_EQ(sketch.find(1'000'000), nullptr);
}

TEST(LatencyHistogram, P99IsTheUpperEndOfItsBucket) {
  LatencyHistogram h;
  EXPECT_EQ(h.quantile(0.99), 0u);
  for (int i = 0; i < 99; ++i) h.add(5);
  h.add(100'000);
  EXPECT_EQ(h.quantile(0.99), 5u);
  h.add(100'000);
  const uint64_t p99 = h.quantile(0.99);
  EXPECT_GE(p99, 100'000u);
  EXPECT_LE(p99, 125'000u);
}

TEST(ShapeStats, AppsPastTheBoundShareOneLine) {
  ShapeStats s;
  for (size_t i = 0; i < kMaxAppsPerShape + 5; ++i) ++s.app("app" + std::to_string(i)).count;
  ASSERT_EQ(s.apps.size(), kMaxAppsPerShape + 1);
  EXPECT_EQ(s.apps.back().app, "_other");
  EXPECT_EQ(s.apps.back().count, 5u);
}

TEST(ShapeStats, EachAppKeepsItsLineWhicheverComesFirst) {
  ShapeStats s;
  ++s.app("web").count;
  ++s.app("batch").count;
  ++s.app("web").count;
  ++s.app("batch").count;
  ++s.app("batch").count;
  ASSERT_EQ(s.apps.size(), 2u);
  EXPECT_EQ(s.apps[0].app, "web");
  EXPECT_EQ(s.apps[0].count, 2u);
  EXPECT_EQ(s.apps[1].app, "batch");
  EXPECT_EQ(s.apps[1].count, 3u);
}

TEST(ShapeStats, MergedTablesKeepOneOtherLine) {
  // One io thread's table already folded its late apps into "_other"; merging another thread's
  // apps must add to that line, not open a second one.
  ShapeStats merged, other;
  merged.app("_other").count = 3;
  for (size_t i = 0; i < kMaxAppsPerShape + 3; ++i) {
    ++other.app("app" + std::to_string(i)).count;
  }
  merged.merge(other);
  size_t others = 0;
  for (const AppStats& a : merged.apps) others += a.app == "_other" ? 1 : 0;
  EXPECT_EQ(others, 1u);
  EXPECT_LE(merged.apps.size(), kMaxAppsPerShape + 1);
}

// ---- the shape hash against the shape text

uint64_t hash_of(const char* body) {
  auto m = request(body);
  return workload_shape_hash(query_parts(m->cmd), 1);
}

std::string text_of(const char* body) {
  auto m = request(body);
  std::string out;
  append_shape_text(out, query_parts(m->cmd));
  return out;
}

TEST(WorkloadShapeHash, EqualTextsHashAlikeAndOthersDiffer) {
  const char* same[] = {
      R"({"find": "c", "$db": "d", "filter": {"a": 1, "b": {"$gt": 2}}, "sort": {"t": -1}})",
      R"({"find": "c", "$db": "d", "filter": {"a": "x", "b": {"$gt": 9}}, "sort": {"t": -1.0}})",
      R"({"find": "c", "$db": "d", "filter": {"a": {"k": 1}, "b": {"$gt": null}, "$comment": "q"},
          "sort": {"t": -1}})"};
  for (const char* body : same) {
    EXPECT_EQ(text_of(body), text_of(same[0])) << body;
    EXPECT_EQ(hash_of(body), hash_of(same[0])) << body;
  }
  const char* different[] = {
      R"({"find": "c", "$db": "d", "filter": {"b": {"$gt": 2}, "a": 1}, "sort": {"t": -1}})",
      R"({"find": "c", "$db": "d", "filter": {"a": 1, "b": {"$gte": 2}}, "sort": {"t": -1}})",
      R"({"find": "c", "$db": "d", "filter": {"a": 1, "b": {"$gt": 2}}, "sort": {"t": 1}})",
      R"({"find": "c", "$db": "d", "filter": {"a": 1, "b": {"$gt": 2}}})",
      R"({"find": "c", "$db": "d", "filter": {"a": 1, "b": {"$gt": 2}}, "sort": {"t": -1},
          "projection": {"a": 1}})",
      R"({"find": "c", "$db": "d", "filter": {"a": 1, "$or": [{"b": 1}, {"c": 1}]}})",
      R"({"aggregate": "c", "$db": "d", "pipeline": [{"$match": {"a": 1}}, {"$group": {"_id": 1}}]})",
  };
  std::set<uint64_t> hashes = {hash_of(same[0])};
  std::set<std::string> texts = {text_of(same[0])};
  for (const char* body : different) {
    hashes.insert(hash_of(body));
    texts.insert(text_of(body));
  }
  EXPECT_EQ(hashes.size(), std::size(different) + 1);
  EXPECT_EQ(texts.size(), std::size(different) + 1);
  EXPECT_NE(workload_shape_hash(QueryParts{}, workload_seed(1, 1)),
            workload_shape_hash(QueryParts{}, workload_seed(2, 1)));
}

// One field equal to a scalar takes a shorter way to its hash for some types (numbers, dates,
// ObjectIds): it must land where the walk does for the others.
TEST(WorkloadShapeHash, OneScalarFieldHashesAsTheWalkDoes) {
  const char* same[] = {
      R"({"find": "c", "$db": "d", "filter": {"_id": {"$oid": "0123456789abcdef01234567"}}})",
      R"({"find": "c", "$db": "d", "filter": {"_id": 5}})",
      R"({"find": "c", "$db": "d", "filter": {"_id": {"$numberLong": "5"}}})",
      R"({"find": "c", "$db": "d", "filter": {"_id": 5.5}})",
      R"({"find": "c", "$db": "d", "filter": {"_id": {"$date": "2026-01-01T00:00:00Z"}}})",
      R"({"find": "c", "$db": "d", "filter": {"_id": "text"}})",
      R"({"find": "c", "$db": "d", "filter": {"_id": true}})",
      R"({"find": "c", "$db": "d", "filter": {"_id": null}})",
      R"({"find": "c", "$db": "d", "filter": {"_id": {"k": 1}}})"};
  for (const char* body : same) {
    EXPECT_EQ(text_of(body), text_of(same[0])) << body;
    EXPECT_EQ(hash_of(body), hash_of(same[0])) << body;
  }
  const char* different[] = {
      R"({"find": "c", "$db": "d", "filter": {"_i": 5}})",
      R"({"find": "c", "$db": "d", "filter": {"_id": {"$gt": 5}}})",
      R"({"find": "c", "$db": "d", "filter": {"_id": 5, "a": 1}})",
      R"({"find": "c", "$db": "d", "filter": {"$where": 5}})",
      R"({"find": "c", "$db": "d", "filter": {}})",
  };
  for (const char* body : different) EXPECT_NE(hash_of(body), hash_of(same[0])) << body;
  EXPECT_EQ(hash_of(R"({"find": "c", "$db": "d", "filter": {"$comment": 5}})"),
            hash_of(R"({"find": "c", "$db": "d", "filter": {}})"));
}

// ---- the engine

class Unindexed : public MeasurementSink {
 public:
  void on_unindexed_operation(const NamespaceLabels& ns, std::string_view app) override {
    std::lock_guard lock(mutex);
    ++counts[std::string(ns.db) + "." + std::string(ns.coll) + ":" + std::string(app)];
  }
  std::mutex mutex;
  std::map<std::string, int> counts;
};

class WorkloadEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine = std::make_unique<Engine>(
        parse_rules(YAML::Load("rules:\n  - match: 'shop.orders'\n    require_index: true\n"
                               "    action: block\n    apps: ['ci']\n"),
                    "test.yaml"),
        &sink, nullptr);
    engine->index_catalog().set("shop", "orders", {{"status_1", {{"status", "1"}}}}, "test");
  }
  Verdict inspect(const char* body, std::string_view app) {
    auto m = request(body);
    return engine->inspect(m->cmd, RequestContext{app, "127.0.0.1:5000"});
  }
  const WorkloadShape* shape(const WorkloadSnapshot& s, std::string_view command,
                             std::string_view text) {
    for (const WorkloadShape& w : s.shapes) {
      if (w.info->command == command && w.info->shape == text) return &w;
    }
    return nullptr;
  }
  Unindexed sink;
  std::unique_ptr<Engine> engine;
};

TEST_F(WorkloadEngineTest, CountsShapesPerAppWithVerdictsTimesAndIndexes) {
  for (int i = 0; i < 3; ++i) {
    Verdict v =
        inspect(R"({"find": "orders", "$db": "shop", "filter": {"status": "open"}})", "web");
    ASSERT_EQ(v.workload.ops, 1u);
    WorkloadLedger::record(v.workload, {100, 2, false});
  }
  Verdict v = inspect(R"({"find": "orders", "$db": "shop", "filter": {"status": "x"}})", "ci");
  WorkloadLedger::record(v.workload, {300, 1, false});
  // Unindexed: warned for nobody (the rule is ci's), blocked for ci.
  v = inspect(R"({"find": "orders", "$db": "shop", "filter": {"customer": 7}})", "web");
  WorkloadLedger::record(v.workload, {5000, 0, true});
  EXPECT_TRUE(
      inspect(R"({"find": "orders", "$db": "shop", "filter": {"customer": 8}})", "ci").any_block());
  // An update batch: two statements of one shape, one of another.
  v = inspect(R"({"update": "orders", "$db": "shop", "updates": [
                  {"q": {"status": "a"}, "u": {"$set": {"x": 1}}},
                  {"q": {"status": "b"}, "u": {"$set": {"x": 1}}},
                  {"q": {"sku": "c"}, "u": {"$set": {"x": 1}}}]})",
              "web");
  ASSERT_EQ(v.workload.ops, 3u);
  ASSERT_EQ(v.workload.marks.size(), 2u);
  WorkloadLedger::record(v.workload, {900, 3, false});

  const WorkloadSnapshot s = engine->workload_report();
  ASSERT_EQ(s.shapes.size(), 4u);
  for (size_t i = 1; i < s.shapes.size(); ++i) {
    EXPECT_GE(s.shapes[i - 1].stats.micros, s.shapes[i].stats.micros);
  }
  const WorkloadShape* status = shape(s, "find", "{status: ?}");
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->stats.count, 4u);
  EXPECT_EQ(status->stats.micros, 600u);
  EXPECT_EQ(status->stats.documents, 7u);
  EXPECT_EQ(status->indexed, 1);
  ASSERT_EQ(status->stats.apps.size(), 2u);
  EXPECT_EQ(status->stats.apps[0].app, "web");
  EXPECT_EQ(status->stats.apps[0].count, 3u);
  EXPECT_EQ(status->stats.apps[1].micros, 300u);

  const WorkloadShape* customer = shape(s, "find", "{customer: ?}");
  ASSERT_NE(customer, nullptr);
  EXPECT_EQ(s.shapes.front().info.get(), customer->info.get());  // the slowest
  EXPECT_EQ(customer->stats.count, 2u);
  EXPECT_EQ(customer->stats.errors, 1u);
  EXPECT_EQ(customer->stats.verdicts[static_cast<size_t>(WorkloadVerdict::kPassed)], 1u);
  EXPECT_EQ(customer->stats.verdicts[static_cast<size_t>(WorkloadVerdict::kBlocked)], 1u);
  EXPECT_EQ(customer->indexed, 0);
  EXPECT_EQ(customer->index, (IndexKeys{{"customer", "1"}}));

  const WorkloadShape* updates = shape(s, "update", "{status: ?}");
  ASSERT_NE(updates, nullptr);
  EXPECT_EQ(updates->stats.count, 2u);
  EXPECT_EQ(updates->stats.micros, 600u);  // two thirds of the batch's time
  const WorkloadShape* sku = shape(s, "update", "{sku: ?}");
  ASSERT_NE(sku, nullptr);
  EXPECT_EQ(sku->stats.micros, 300u);
  EXPECT_EQ(sku->indexed, 0);

  EXPECT_EQ(sink.counts["shop.orders:web"], 2);  // customer once, sku once
  EXPECT_EQ(sink.counts["shop.orders:ci"], 1);
}

TEST_F(WorkloadEngineTest, ARefusedStatementIsCountedButTakesNoneOfTheReply) {
  // ci's unordered batch: the sku statement is refused (unindexed), the status one goes on.
  Verdict v = inspect(R"({"update": "orders", "$db": "shop", "ordered": false, "updates": [
                  {"q": {"sku": "c"}, "u": {"$set": {"x": 1}}},
                  {"q": {"status": "b"}, "u": {"$set": {"x": 1}}}]})",
                      "ci");
  ASSERT_FALSE(v.blocked_statements.empty());
  ASSERT_EQ(v.workload.ops, 1u);
  WorkloadLedger::record(v.workload, {800, 1, false});
  const WorkloadSnapshot s = engine->workload_report();
  const WorkloadShape* sku = shape(s, "update", "{sku: ?}");
  ASSERT_NE(sku, nullptr);
  EXPECT_EQ(sku->stats.count, 1u);
  EXPECT_EQ(sku->stats.verdicts[static_cast<size_t>(WorkloadVerdict::kBlocked)], 1u);
  EXPECT_EQ(sku->stats.replies, 0u);
  EXPECT_EQ(sku->stats.micros, 0u);
  const WorkloadShape* status = shape(s, "update", "{status: ?}");
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->stats.replies, 1u);
  EXPECT_EQ(status->stats.micros, 800u);
  EXPECT_EQ(status->stats.documents, 1u);
}

TEST_F(WorkloadEngineTest, TheLedgerStaysWithinItsBoundAcrossThreads) {
  engine->workload().set_max_shapes(50);
  auto run = [&](int first) {
    for (int i = first; i < first + 5'000; ++i) {
      const std::string body =
          R"({"find": "orders", "$db": "shop", "filter": {"f)" + std::to_string(i) + R"(": 1}})";
      auto m = request(body);
      Verdict v = engine->inspect(m->cmd, RequestContext{"web", "127.0.0.1:5000"});
      WorkloadLedger::record(v.workload, {10, 1, false});
    }
  };
  std::thread a(run, 0), b(run, 5'000);
  a.join();
  b.join();
  const WorkloadSnapshot s = engine->workload_report();
  EXPECT_LE(s.shapes.size(), 50u);
  uint64_t count = s.overflow.count, micros = s.overflow.micros;
  for (const WorkloadShape& w : s.shapes) {
    count += w.stats.count;
    micros += w.stats.micros;
  }
  EXPECT_EQ(count, 10'000u);
  EXPECT_EQ(micros, 100'000u);
}

TEST_F(WorkloadEngineTest, AShapeKeepsBoundedTextWhateverTheClientSends) {
  // A key of 1 MB: the kept shape holds its first kilobyte, and nothing it is judged by.
  const std::string key(1 << 20, 'k');
  const std::string body = R"({"find": "orders", "$db": "shop", "filter": {")" + key + R"(": 1}})";
  auto m = request(body);
  Verdict v = engine->inspect(m->cmd, RequestContext{"web", "127.0.0.1:5000"});
  WorkloadLedger::record(v.workload, {10, 1, false});
  const WorkloadSnapshot s = engine->workload_report();
  ASSERT_EQ(s.shapes.size(), 1u);
  EXPECT_LE(s.shapes[0].info->shape.size(), 1024u);
  EXPECT_TRUE(s.shapes[0].info->fields.equality.empty());
  EXPECT_EQ(s.shapes[0].indexed, -1);  // too large to keep its fields: not judged
}

TEST_F(WorkloadEngineTest, APlanTooLargeToKeepIsNeitherIndexedNorUnindexed) {
  // An indexed equality with a $natural hint: the guardrail refuses its scan. Its plan (over
  // 1 KiB with the long $in) is not kept, and its fields alone would say "indexed".
  std::string values;
  for (int i = 0; i < 300; ++i) values += (i ? ", " : "") + std::to_string(i);
  const std::string body = R"({"find": "orders", "$db": "shop", "filter": {"status": {"$in": [)" +
                           values + R"(]}}, "hint": {"$natural": 1}})";
  auto m = request(body);
  Verdict v = engine->inspect(m->cmd, RequestContext{"ci", "127.0.0.1:5000"});
  EXPECT_TRUE(v.any_block());
  const WorkloadSnapshot s = engine->workload_report();
  ASSERT_EQ(s.shapes.size(), 1u);
  EXPECT_TRUE(s.shapes[0].info->plan_too_large);
  EXPECT_EQ(s.shapes[0].indexed, -1);
}

// One shape, two plans: an indexed equality is served, the same with a $natural hint (which the
// shape does not keep) is a collection scan the guardrail refuses. The shape's first query was
// served, yet a later one was not: the ledger says neither "indexed" nor "unindexed" of the
// shape, and counts the refused one.
TEST_F(WorkloadEngineTest, AShapeWhoseQueriesTheGuardrailJudgedDifferentlyIsNotKnown) {
  Verdict v = inspect(R"({"find": "orders", "$db": "shop", "filter": {"status": "a"}})", "ci");
  EXPECT_FALSE(v.any_block());
  WorkloadSnapshot s = engine->workload_report();
  ASSERT_EQ(s.shapes.size(), 1u);
  EXPECT_EQ(s.shapes[0].indexed, 1);
  v = inspect(R"({"find": "orders", "$db": "shop", "filter": {"status": "b"},
                  "hint": {"$natural": 1}})",
              "ci");
  EXPECT_TRUE(v.any_block());
  s = engine->workload_report();
  ASSERT_EQ(s.shapes.size(), 1u) << "one shape for both";
  EXPECT_EQ(s.shapes[0].stats.count, 2u);
  EXPECT_EQ(s.shapes[0].stats.unserved, 1u);
  EXPECT_EQ(s.shapes[0].indexed, -1);
}

TEST_F(WorkloadEngineTest, NamespacesPastTheTrackingBoundKeepTheirOwnShapes) {
  engine = std::make_unique<Engine>(
      parse_rules(YAML::Load("tracking:\n  max_namespaces: 1\n"), "test.yaml"), &sink, nullptr);
  engine->index_catalog().set("shop", "b", {{"customer_1", {{"customer", "1"}}}}, "test");
  engine->index_catalog().set("shop", "c", {}, "test");
  for (const char* coll : {"a", "b", "c"}) {  // "a" takes the one tracked namespace
    const std::string body =
        std::string(R"({"find": ")") + coll + R"(", "$db": "shop", "filter": {"customer": 1}})";
    auto m = request(body);
    Verdict v = engine->inspect(m->cmd, RequestContext{"web", "127.0.0.1:5000"});
    WorkloadLedger::record(v.workload, {10, 1, false});
  }
  const WorkloadSnapshot s = engine->workload_report();
  std::map<std::string, int> indexed;
  for (const WorkloadShape& w : s.shapes) indexed[w.info->collection] = w.indexed;
  ASSERT_EQ(indexed.size(), 3u);
  EXPECT_EQ(indexed["b"], 1);  // its own index, not another collection's verdict
  EXPECT_EQ(indexed["c"], 0);
}

TEST_F(WorkloadEngineTest, StatementsAfterARefusedOneInAnOrderedBatchAreNeverCounted) {
  // ci's ordered batch stops at its refused first statement: the others are never sent.
  Verdict v = inspect(R"({"delete": "orders", "$db": "shop", "ordered": true, "deletes": [
                  {"q": {"sku": "c"}, "limit": 0},
                  {"q": {"status": "a"}, "limit": 0},
                  {"q": {"status": "b"}, "limit": 0}]})",
                      "ci");
  ASSERT_EQ(v.blocked_statements, std::vector<int32_t>{0});
  EXPECT_EQ(v.workload.ops, 0u);
  WorkloadLedger::record(v.workload, {500, 0, false});
  const WorkloadSnapshot s = engine->workload_report();
  const WorkloadShape* sku = shape(s, "delete", "{sku: ?}");
  ASSERT_NE(sku, nullptr);
  EXPECT_EQ(sku->stats.verdicts[static_cast<size_t>(WorkloadVerdict::kBlocked)], 1u);
  const WorkloadShape* status = shape(s, "delete", "{status: ?}");
  EXPECT_TRUE(status == nullptr ||
              status->stats.verdicts[static_cast<size_t>(WorkloadVerdict::kPassed)] == 0);
}

TEST_F(WorkloadEngineTest, AlternatingShapesKeepTheirOwnCountsAndOneErrorPerReply) {
  std::string body = R"({"update": "orders", "$db": "shop", "ordered": false, "updates": [)";
  for (int i = 0; i < 40; ++i) {
    body += i ? "," : "";
    body += i % 2 ? R"({"q": {"sku": 1}, "u": {"$set": {"x": 1}}})"
                  : R"({"q": {"status": 1}, "u": {"$set": {"x": 1}}})";
  }
  body += "]}";
  Verdict v = inspect(body.c_str(), "web");
  ASSERT_EQ(v.workload.ops, 40u);
  ASSERT_EQ(v.workload.marks.size(), 2u);
  WorkloadLedger::record(v.workload, {4000, 40, true});
  const WorkloadSnapshot s = engine->workload_report();
  const WorkloadShape* status = shape(s, "update", "{status: ?}");
  const WorkloadShape* sku = shape(s, "update", "{sku: ?}");
  ASSERT_NE(status, nullptr);
  ASSERT_NE(sku, nullptr);
  EXPECT_EQ(status->stats.replies, 20u);
  EXPECT_EQ(sku->stats.replies, 20u);
  EXPECT_EQ(status->stats.micros, 2000u);
  EXPECT_EQ(sku->stats.micros, 2000u);
  EXPECT_EQ(status->stats.errors + sku->stats.errors, 1u);  // one failed reply, one error
}

TEST(WorkloadShapeHash, ARegexIsNotAnEqualityAndDeepFiltersStayApart) {
  const char* eq = R"({"find": "c", "$db": "d", "filter": {"name": "a"}})";
  const char* regex =
      R"({"find": "c", "$db": "d", "filter": {"name": {"$regularExpression": {"pattern": "^a", "options": ""}}}})";
  EXPECT_NE(text_of(eq), text_of(regex));
  EXPECT_NE(hash_of(eq), hash_of(regex));
  EXPECT_EQ(text_of(regex), "{name: /?/}");
  // Two filters that differ past the depth the shape text spells out are two shapes.
  auto nested = [](const char* leaf) {
    std::string inner = std::string(R"({")") + leaf + R"(": 1})";
    for (int i = 0; i < 12; ++i) inner = R"({"$and": [)" + inner + "]}";
    return std::string(R"({"find": "c", "$db": "d", "filter": )") + inner + "}";
  };
  EXPECT_NE(hash_of(nested("a").c_str()), hash_of(nested("b").c_str()));
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
