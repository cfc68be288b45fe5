// The replay's comparison: replies reduced to what is compared, documents in order for a
// sorted read and as a multiset otherwise, shapes grouped and named without values.
#include "docguard/tools/replay_compare.h"

#include <gtest/gtest.h>

#include "test_messages.h"

namespace docguard::tools {
namespace {

ReplyDigest digest(const char* reply_json) {
  ReplyDigest d;
  auto reply = testing::json(reply_json);
  add_reply(d, testing::view(reply));
  return d;
}

TEST(ReplayCompare, ReadsStatusCountsCursorAndDocuments) {
  const ReplyDigest d = digest(
      R"({"cursor": {"id": {"$numberLong": "77"}, "ns": "d.c",
          "firstBatch": [{"_id": 1}, {"_id": 2}]}, "ok": 1})");
  EXPECT_TRUE(d.present);
  EXPECT_TRUE(d.ok);
  EXPECT_EQ(d.cursor_id, 77);
  EXPECT_EQ(d.documents.size(), 2U);
  const ReplyDigest w = digest(R"({"n": 3, "nModified": 2, "ok": 1.0})");
  EXPECT_EQ(w.n, 3);
  EXPECT_EQ(w.n_modified, 2);
  const ReplyDigest e = digest(R"({"ok": 0, "code": 43, "errmsg": "cursor not found"})");
  EXPECT_FALSE(e.ok);
  EXPECT_EQ(e.code, 43);
}

TEST(ReplayCompare, GetMoreBatchesJoinTheFirstBatch) {
  ReplyDigest d = digest(R"({"cursor": {"id": 5, "firstBatch": [{"a": 1}]}, "ok": 1})");
  auto more = testing::json(R"({"cursor": {"id": 0, "nextBatch": [{"a": 2}, {"a": 3}]}, "ok": 1})");
  add_reply(d, testing::view(more));
  EXPECT_EQ(d.documents.size(), 3U);
  EXPECT_EQ(d.cursor_id, 0);
}

// The difference in words, or "" when the answers are the same.
std::string difference(const AnswerComparison& compared) {
  return compared ? "" : compared.error();
}

TEST(ReplayCompare, SortedReadsCompareInOrderUnsortedAsMultiset) {
  const ReplyDigest recorded =
      digest(R"({"cursor": {"id": 0, "firstBatch": [{"a": 1}, {"a": 2}]}, "ok": 1})");
  const ReplyDigest swapped =
      digest(R"({"cursor": {"id": 0, "firstBatch": [{"a": 2}, {"a": 1}]}, "ok": 1})");
  std::string why;
  EXPECT_TRUE(same_answer(recorded, swapped, /*ordered=*/false));
  why = difference(same_answer(recorded, swapped, /*ordered=*/true));
  EXPECT_FALSE(why.empty());
  EXPECT_NE(why.find("in order"), std::string::npos) << why;

  const ReplyDigest changed =
      digest(R"({"cursor": {"id": 0, "firstBatch": [{"a": 1}, {"a": 3}]}, "ok": 1})");
  why = difference(same_answer(recorded, changed, /*ordered=*/false));
  EXPECT_FALSE(why.empty());
  EXPECT_EQ(why, "documents differ (multiset): 1 of 2 not matched");
  // A repeated document counts as often as it comes: a multiset, not a set.
  const ReplyDigest twice =
      digest(R"({"cursor": {"id": 0, "firstBatch": [{"a": 1}, {"a": 1}]}, "ok": 1})");
  why = difference(same_answer(recorded, twice, /*ordered=*/false));
  EXPECT_FALSE(why.empty());
}

TEST(ReplayCompare, StatusCodeAndCountsDiffer) {
  std::string why;
  why = difference(
      same_answer(digest(R"({"ok": 1, "n": 1})"), digest(R"({"ok": 1, "n": 0})"), false));
  EXPECT_FALSE(why.empty());
  EXPECT_EQ(why, "n 1 vs 0");
  why =
      difference(same_answer(digest(R"({"ok": 1})"), digest(R"({"ok": 0, "code": 11000})"), false));
  EXPECT_FALSE(why.empty());
  EXPECT_EQ(why, "ok 1 vs 0 (code 11000)");
  why = difference(
      same_answer(digest(R"({"ok": 1})"),
                  digest(R"({"ok": 0, "code": 291, "codeName": "NoQueryExecutionPlans"})"), false));
  EXPECT_FALSE(why.empty());
  EXPECT_EQ(why, "ok 1 vs 0 (code 291 NoQueryExecutionPlans)");
  why = difference(same_answer(digest(R"({"ok": 0})"), digest(R"({"ok": 1})"), false));
  EXPECT_FALSE(why.empty());
  EXPECT_EQ(why, "ok 0 vs 1");
  why = difference(
      same_answer(digest(R"({"ok": 0, "code": 2})"), digest(R"({"ok": 0, "code": 3})"), false));
  EXPECT_FALSE(why.empty());
  EXPECT_EQ(why, "code 2 vs 3");
  // The cursor id is the cluster's to choose: never a difference.
  EXPECT_TRUE(same_answer(digest(R"({"cursor": {"id": 1, "firstBatch": []}, "ok": 1})"),
                          digest(R"({"cursor": {"id": 2, "firstBatch": []}, "ok": 1})"), true));
}

TEST(ReplayCompare, ShapeNamesCommandNamespaceAndFilterWithoutValues) {
  auto a = testing::request(R"({"find": "orders", "filter": {"status": "open"},
                                "sort": {"created": -1}, "$db": "shop"})");
  auto b = testing::request(R"({"find": "orders", "filter": {"status": "closed"},
                                "sort": {"created": -1}, "$db": "shop"})");
  const recording::RequestShape sa = recording::shape_of_request(a->bytes);
  EXPECT_EQ(sa.text, recording::shape_of_request(b->bytes).text);
  EXPECT_EQ(sa.ns, "shop.orders");
  EXPECT_TRUE(sa.sorted);
  EXPECT_EQ(sa.text.find("open"), std::string::npos) << sa.text;
  EXPECT_EQ(sa.text.rfind("find shop.orders ", 0), 0U) << sa.text;
  auto unsorted = testing::request(R"({"find": "orders", "filter": {"sku": 1}, "$db": "shop"})");
  EXPECT_FALSE(recording::shape_of_request(unsorted->bytes).sorted);
  auto pipeline = testing::request(
      R"({"aggregate": "orders", "pipeline": [{"$match": {"a": 1}}, {"$sort": {"b": 1}}],
          "cursor": {}, "$db": "shop"})");
  EXPECT_TRUE(recording::shape_of_request(pipeline->bytes).sorted);
}

TEST(ReplayCompare, ByShapeCountsDifferingOperationsAndPercentiles) {
  std::vector<ComparedOperation> ops(3);
  for (auto& op : ops) {
    op.shape = "find d.c {a: ?}";
    op.recorded = digest(R"({"ok": 1, "n": 1})");
    op.live = digest(R"({"ok": 1, "n": 1})");
    op.recorded_micros = {100};
    op.live_micros = {200};
  }
  ops[2].shape = "insert d.c";
  ops[1].live = digest(R"({"ok": 1, "n": 2})");
  const std::vector<ShapeResult> shapes = compare_by_shape(ops);
  ASSERT_EQ(shapes.size(), 2U);
  EXPECT_EQ(shapes[0].shape, "find d.c {a: ?}");
  EXPECT_EQ(shapes[0].operations, 2U);
  EXPECT_EQ(shapes[0].differing, 1U);
  ASSERT_NE(shapes[0].example, nullptr);
  EXPECT_EQ(shapes[0].example->live.n, 2);
  EXPECT_EQ(shapes[0].live_p99, 200U);
  EXPECT_EQ(shapes[1].differing, 0U);
  EXPECT_EQ(percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 50), 5U);
  EXPECT_EQ(percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 99), 10U);
  EXPECT_EQ(percentile({}, 50), 0U);
}

TEST(ReplayCompare, FindAndModifyDistinctWriteErrorsAndKilledCursorsAreCompared) {
  std::string why;
  why = difference(same_answer(digest(R"({"value": {"_id": 1, "s": "a"}, "ok": 1})"),
                               digest(R"({"value": {"_id": 1, "s": "b"}, "ok": 1})"), false));
  EXPECT_FALSE(why.empty());
  EXPECT_EQ(why, "value differs");
  why = difference(same_answer(digest(R"({"values": ["a", "b"], "ok": 1})"),
                               digest(R"({"values": ["a", "c"], "ok": 1})"), false));
  EXPECT_FALSE(why.empty());
  EXPECT_NE(why.find("values differ"), std::string::npos) << why;
  // distinct's values are a set the server may return in any order.
  EXPECT_TRUE(same_answer(digest(R"({"values": ["a", "b"], "ok": 1})"),
                          digest(R"({"values": ["b", "a"], "ok": 1})"), false));
  why = difference(
      same_answer(digest(R"({"n": 1, "writeErrors": [{"index": 1, "code": 11000}], "ok": 1})"),
                  digest(R"({"n": 1, "ok": 1})"), false));
  EXPECT_FALSE(why.empty());
  EXPECT_NE(why.find("writeErrors"), std::string::npos) << why;
  why = difference(same_answer(digest(R"({"cursorsKilled": [1], "cursorsNotFound": [], "ok": 1})"),
                               digest(R"({"cursorsKilled": [], "cursorsNotFound": [1], "ok": 1})"),
                               false));
  EXPECT_FALSE(why.empty());
  EXPECT_NE(why.find("cursorsKilled"), std::string::npos) << why;
}

TEST(ReplayCompare, TheFirstDifferingFieldIsNamedValuesOnlyWhenAsked) {
  auto a = testing::json(R"({"value": {"_id": 1, "item": {"qty": 5, "sku": "x"}}, "ok": 1})");
  auto b = testing::json(R"({"value": {"_id": 1, "item": {"qty": 6, "sku": "x"}}, "ok": 1})");
  EXPECT_EQ(first_field_difference(testing::view(a), testing::view(b), false, false),
            "value.item.qty: \"<int32>\" vs \"<int32>\"");
  EXPECT_EQ(first_field_difference(testing::view(a), testing::view(b), false, true),
            "value.item.qty: 5 vs 6");
  auto sorted_a = testing::json(
      R"({"cursor": {"id": 0, "firstBatch": [{"_id": 1, "s": 1}, {"_id": 2, "s": 2}]}, "ok": 1})");
  auto sorted_b = testing::json(
      R"({"cursor": {"id": 0, "firstBatch": [{"_id": 1, "s": 1}, {"_id": 2, "s": 3}]}, "ok": 1})");
  EXPECT_EQ(first_field_difference(testing::view(sorted_a), testing::view(sorted_b), true, true),
            "document 1: s: 2 vs 3");
  EXPECT_EQ(first_field_difference(testing::view(sorted_a), testing::view(sorted_b), false, true),
            "s: 2 vs 3");
  auto d1 = testing::json(R"({"values": ["a", "b"], "ok": 1})");
  auto d2 = testing::json(R"({"values": ["a", "c"], "ok": 1})");
  EXPECT_EQ(first_field_difference(testing::view(d1), testing::view(d2), false, true),
            "values: \"b\" not in the replayed values");
}

TEST(ReplayCompare, IgnoredPathsLeaveTheHash) {
  ReplyDigest a;
  ReplyDigest b;
  auto ra = testing::json(
      R"({"cursor": {"id": 0, "firstBatch": [{"_id": 1, "at": {"t": 1, "k": 2}}]}, "ok": 1})");
  auto rb = testing::json(
      R"({"cursor": {"id": 0, "firstBatch": [{"_id": 1, "at": {"t": 9, "k": 2}}]}, "ok": 1})");
  const std::vector<std::string> ignore = {"at.t"};
  add_reply(a, testing::view(ra), ignore);
  add_reply(b, testing::view(rb), ignore);
  EXPECT_TRUE(same_answer(a, b, false));
  EXPECT_EQ(first_field_difference(testing::view(ra), testing::view(rb), false, true, ignore), "");
}

}  // namespace
}  // namespace docguard::tools
