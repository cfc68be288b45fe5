#include "docguard/codec/command_view.h"

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "test_messages.h"

namespace docguard::codec {
namespace {

using testing::json;
using testing::view;

TEST(CommandView, KindOfEveryKnownNameAndNoOther) {
  const std::pair<const char*, CommandKind> known[] = {
      {"insert", CommandKind::kInsert},
      {"update", CommandKind::kUpdate},
      {"delete", CommandKind::kDelete},
      {"findAndModify", CommandKind::kFindAndModify},
      {"findandmodify", CommandKind::kFindAndModify},
      {"find", CommandKind::kFind},
      {"aggregate", CommandKind::kAggregate},
      {"count", CommandKind::kCount},
      {"distinct", CommandKind::kDistinct},
      {"getMore", CommandKind::kGetMore},
      {"bulkWrite", CommandKind::kBulkWrite},
      {"create", CommandKind::kCreate},
      {"explain", CommandKind::kExplain},
      {"hello", CommandKind::kHello},
      {"isMaster", CommandKind::kHello},
      {"ismaster", CommandKind::kHello},
  };
  // Qualified: a unity build puts another test's kind_of helper beside this one.
  for (const auto& [name, kind] : known) EXPECT_EQ(codec::kind_of(name), kind) << name;
  // Same lengths, other letters; prefixes; case the server does not accept.
  for (const char* other :
       {"", "fond", "finds", "insers", "cleate", "getmore", "Find", "distinc", "aggregats",
        "findAndModifx", "ping", "listIndexes", "isWritablePrimary", "deletes"}) {
    EXPECT_EQ(codec::kind_of(other), CommandKind::kOther) << other;
  }
}

TEST(CommandView, InsertWithDocumentsInBody) {
  auto m = testing::op_msg(R"({"insert": "products", "$db": "shop", "ordered": false,
                              "documents": [{"_id": 1}, {"_id": 2}, 3]})");
  auto msg = codec::OpMsg::parse(m);
  auto v = describe(msg);
  EXPECT_EQ(v.kind, CommandKind::kInsert);
  EXPECT_EQ(v.database, "shop");
  EXPECT_EQ(v.collection, "products");
  EXPECT_FALSE(v.ordered);
  EXPECT_EQ(v.statements.size(), 2u);  // non-documents are skipped
  EXPECT_EQ(v.payload_source, PayloadSource::kBody);
  EXPECT_EQ(v.payload_field, "documents");
  EXPECT_TRUE(v.is_write());
}

TEST(CommandView, UpdateWithKind1Sequence) {
  auto body = json(R"({"update": "c", "$db": "t"})");
  auto u1 = json(R"({"q": {"_id": 1}, "u": {"$push": {"a": 1}}})");
  auto m = codec::OpMsgBuilder(1, 0, codec::op_msg_flags::kMoreToCome)
               .body(body.get())
               .sequence("updates", {view(u1)})
               .finish();
  auto msg = codec::OpMsg::parse(m);
  auto v = describe(msg);
  EXPECT_EQ(v.kind, CommandKind::kUpdate);
  EXPECT_TRUE(v.more_to_come);
  EXPECT_EQ(v.payload_source, PayloadSource::kSequence);
  EXPECT_EQ(v.statements.size(), 1u);
}

TEST(CommandView, FindAndModifyWithPipelineUpdate) {
  auto m = testing::op_msg(R"({"findAndModify": "c", "$db": "t", "query": {"_id": 1},
                              "update": [{"$set": {"a": 1}}], "upsert": true})");
  auto msg = codec::OpMsg::parse(m);
  auto v = describe(msg);
  EXPECT_EQ(v.kind, CommandKind::kFindAndModify);
  EXPECT_TRUE(v.update_is_pipeline);
  EXPECT_TRUE(v.upsert);
  EXPECT_FALSE(v.query.empty());
}

TEST(CommandView, AggregateAndExplain) {
  auto m = testing::op_msg(R"({"aggregate": "orders", "$db": "shop",
                              "pipeline": [{"$lookup": {"from": "items"}}], "cursor": {}})");
  auto msg = codec::OpMsg::parse(m);
  auto v = describe(msg);
  EXPECT_EQ(v.kind, CommandKind::kAggregate);
  EXPECT_FALSE(v.pipeline.empty());
  EXPECT_TRUE(v.is_read());

  auto e = testing::op_msg(R"({"explain": {"aggregate": "orders", "pipeline": [{"$match": {}}]},
                              "$db": "shop"})");
  auto emsg = codec::OpMsg::parse(e);
  auto ev = describe(emsg);
  EXPECT_EQ(ev.kind, CommandKind::kExplain);
  EXPECT_EQ(ev.explained, "aggregate");
  EXPECT_EQ(ev.collection, "orders");
  EXPECT_FALSE(ev.pipeline.empty());
}

TEST(CommandView, BulkWriteOpsAndNsInfo) {
  auto body = json(R"({"bulkWrite": 1, "$db": "admin", "ordered": true})");
  auto op = json(R"({"insert": 0, "document": {"a": 1}})");
  auto ns = json(R"({"ns": "t.c"})");
  auto m = codec::OpMsgBuilder(1, 0)
               .body(body.get())
               .sequence("ops", {view(op)})
               .sequence("nsInfo", {view(ns)})
               .finish();
  auto msg = codec::OpMsg::parse(m);
  auto v = describe(msg);
  EXPECT_EQ(v.kind, CommandKind::kBulkWrite);
  EXPECT_EQ(v.statements.size(), 1u);
  EXPECT_EQ(v.ns_info.size(), 1u);
  EXPECT_EQ(v.database, "admin");
}

TEST(CommandView, UnusualShapesDoNotThrow) {
  auto m = testing::op_msg(R"({"insert": 5, "documents": "nope"})");
  auto msg = codec::OpMsg::parse(m);
  auto v = describe(msg);
  EXPECT_EQ(v.collection, "");
  EXPECT_TRUE(v.statements.empty());
  EXPECT_EQ(v.database, "");
}

TEST(CommandView, SingleScalarEqualityNamesTheOneFixedSizeField) {
  EXPECT_EQ(single_scalar_equality(view(json(R"({"_id": 5})"))), "_id");
  EXPECT_EQ(single_scalar_equality(view(json(R"({"n": {"$numberLong": "7"}})"))), "n");
  EXPECT_EQ(single_scalar_equality(view(json(R"({"at": 1.5})"))), "at");
  EXPECT_EQ(single_scalar_equality(view(json(R"({"_id": {"$oid": "0123456789abcdef01234567"}})"))),
            "_id");
  // Two fields, a string, a document, an operator key, the empty document: not one.
  EXPECT_EQ(single_scalar_equality(view(json(R"({"_id": 5, "a": 1})"))), "");
  EXPECT_EQ(single_scalar_equality(view(json(R"({"_id": "x"})"))), "");
  EXPECT_EQ(single_scalar_equality(view(json(R"({"_id": {"$gt": 5}})"))), "");
  EXPECT_EQ(single_scalar_equality(view(json(R"({"$expr": 5})"))), "");
  EXPECT_EQ(single_scalar_equality(view(json("{}"))), "");
}

TEST(CommandView, QueryScalarKeyIsTheQuerysAndKeptOnceAsked) {
  auto m = testing::op_msg(R"({"find": "c", "$db": "t", "filter": {"sku": 12}})");
  auto v = describe(codec::OpMsg::parse(m));
  EXPECT_FALSE(v.query_scalar_key_known);
  EXPECT_EQ(v.query_scalar_key(), "sku");
  EXPECT_TRUE(v.query_scalar_key_known);
  EXPECT_EQ(v.query_scalar_key(), "sku");
  auto range = testing::op_msg(R"({"find": "c", "$db": "t", "filter": {"sku": {"$gt": 1}}})");
  EXPECT_EQ(describe(codec::OpMsg::parse(range)).query_scalar_key(), "");
}

}  // namespace
}  // namespace docguard::codec

namespace docguard::codec {
namespace {

// What describe() reads is the same whether it takes the elements parse() noted while it
// validated the body, walks a body of more elements than parse() keeps, or walks the body of
// an OpMsg made by hand (nothing noted).
TEST(CommandView, TheSameViewFromNotedElementsFromAWalkAndFromAMessageMadeByHand) {
  std::deque<std::vector<uint8_t>> messages;  // the views point into them
  auto describe_body = [&](const std::string& body_json) {
    const auto& m = messages.emplace_back(testing::op_msg(body_json.c_str()));
    const OpMsg parsed = OpMsg::parse(m);
    OpMsg by_hand;
    by_hand.body = parsed.body;  // no elements noted: a walk
    EXPECT_FALSE(by_hand.body_elements.complete);
    const CommandView a = describe(parsed);
    const CommandView b = describe(by_hand);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.database, b.database);
    EXPECT_EQ(a.collection, b.collection);
    EXPECT_EQ(a.query.size, b.query.size);
    EXPECT_EQ(a.sort.size, b.sort.size);
    EXPECT_EQ(a.hint_name, b.hint_name);
    EXPECT_EQ(a.has_max_time, b.has_max_time);
    return std::make_pair(parsed.body_elements.complete, a);
  };
  const auto [few_noted, few] =
      describe_body(R"({"find": "items", "filter": {"a": 1}, "sort": {"b": 1}, "hint": "a_1",
                        "maxTimeMS": 5, "$db": "shop"})");
  EXPECT_TRUE(few_noted);
  EXPECT_EQ(few.kind, CommandKind::kFind);
  EXPECT_EQ(few.collection, "items");
  EXPECT_EQ(few.database, "shop");
  EXPECT_FALSE(few.query.empty());
  EXPECT_FALSE(few.sort.empty());
  EXPECT_EQ(few.hint_name, "a_1");
  EXPECT_TRUE(few.has_max_time);
  // Twenty fields before the filter and $db: past what parse() keeps.
  std::string many = R"({"find": "items")";
  for (int i = 0; i < 20; ++i) many += ", \"x" + std::to_string(i) + "\": " + std::to_string(i);
  many += R"(, "filter": {"a": 1}, "$db": "shop"})";
  const auto [many_noted, walked] = describe_body(many);
  EXPECT_FALSE(many_noted);
  EXPECT_EQ(walked.database, "shop");
  EXPECT_FALSE(walked.query.empty());
  // The last element's value ends at the body's own NUL.
  const auto [last_noted, last] = describe_body(R"({"find": "items", "$db": "shop"})");
  EXPECT_TRUE(last_noted);
  EXPECT_EQ(last.database, "shop");
}

}  // namespace
}  // namespace docguard::codec
