// The codec's BSON reading helpers every layer uses: key_of, utf8_of, child_of,
// complete_first_batch, and the in-place owner ScopedBson.
#include <gtest/gtest.h>

#include <string>

#include "docguard/codec/bson_view.h"
#include "test_messages.h"

namespace docguard::codec {
namespace {

using testing::json;
using testing::view;

TEST(BsonRead, KeyAndTextOfAnElement) {
  auto doc = json(R"({"name": "orders", "n": 3})");
  bson_iter_t it;
  ASSERT_TRUE(bson_iter_init(&it, doc.get()));
  ASSERT_TRUE(bson_iter_next(&it));
  EXPECT_EQ(key_of(it), "name");
  EXPECT_EQ(utf8_of(it), "orders");
  ASSERT_TRUE(bson_iter_next(&it));
  EXPECT_EQ(key_of(&it), "n");
  EXPECT_EQ(utf8_of(&it), "");  // not a string
}

TEST(BsonRead, ChildOfOpensDocumentsAndArraysOnly) {
  auto doc = json(R"({"d": {"a": 1}, "arr": [7], "s": "x"})");
  bson_iter_t it, child;
  ASSERT_TRUE(bson_iter_init_find(&it, doc.get(), "d"));
  ASSERT_TRUE(child_of(it, &child));
  ASSERT_TRUE(bson_iter_next(&child));
  EXPECT_EQ(key_of(child), "a");
  ASSERT_TRUE(bson_iter_init_find(&it, doc.get(), "arr"));
  ASSERT_TRUE(child_of(it, &child));
  ASSERT_TRUE(bson_iter_next(&child));
  EXPECT_EQ(bson_iter_as_int64(&child), 7);
  ASSERT_TRUE(bson_iter_init_find(&it, doc.get(), "s"));
  EXPECT_FALSE(child_of(it, &child));
}

TEST(BsonRead, CompleteFirstBatchOnlyForAnExhaustedCursor) {
  auto done =
      json(R"({"cursor": {"firstBatch": [{"name": "a"}], "id": 0, "ns": "db.c"}, "ok": 1})");
  BsonView batch;
  ASSERT_TRUE(complete_first_batch(view(done), &batch));
  EXPECT_EQ(to_json(batch), R"({ "0" : { "name" : "a" } })");

  auto empty = json(R"({"cursor": {"id": 0, "firstBatch": []}, "ok": 1})");
  BsonView none;
  EXPECT_TRUE(complete_first_batch(view(empty), &none));

  auto open = json(R"({"cursor": {"firstBatch": [{"name": "a"}], "id": {"$numberLong": "42"}}})");
  BsonView part;
  EXPECT_FALSE(complete_first_batch(view(open), &part));

  auto no_batch = json(R"({"cursor": {"id": 0}})");
  BsonView missing;
  EXPECT_FALSE(complete_first_batch(view(no_batch), &missing));
}

TEST(BsonRead, ScopedBsonOwnsWhatIsBuiltInPlace) {
  ScopedBson doc;
  BSON_APPEND_UTF8(doc.get(), "listIndexes", "orders");
  BSON_APPEND_INT32(doc.get(), "maxTimeMS", 100);
  EXPECT_EQ(to_json(doc.view()), R"({ "listIndexes" : "orders", "maxTimeMS" : 100 })");
  EXPECT_EQ(doc.bytes().size(), doc.get()->len);
}

}  // namespace
}  // namespace docguard::codec
