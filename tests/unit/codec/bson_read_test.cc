// The codec's BSON reading helpers every layer uses: key_of, utf8_of, child_of,
// complete_first_batch, the in-place owner ScopedBson, and the typed getters of BsonElements.
#include <gtest/gtest.h>

#include <string>

#include "docguard/codec/bson_elements.h"
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

// Each getter reads what libbson's iterator reads from the same element.
TEST(BsonRead, ElementGettersAgreeWithLibbson) {
  auto doc = json(R"({"i": 7, "l": {"$numberLong": "-9000000000"}, "d": 2.5, "b": true,
      "t": {"$date": 1700000000123}, "o": {"$oid": "0123456789abcdef01234567"},
      "r": {"$regularExpression": {"pattern": "^ab", "options": "i"}},
      "bin": {"$binary": {"base64": "AQID", "subType": "04"}},
      "dec": {"$numberDecimal": "1.5"}, "ts": {"$timestamp": {"t": 5, "i": 9}}, "s": "x"})");
  bson_iter_t it;
  ASSERT_TRUE(bson_iter_init(&it, doc.get()));
  for (BsonElements e(doc.get()); e.next();) {
    ASSERT_TRUE(bson_iter_next(&it));
    EXPECT_EQ(e.key, key_of(it));
    EXPECT_EQ(e.as_double(), bson_iter_as_double(&it)) << e.key;
    EXPECT_EQ(e.as_int64(), bson_iter_as_int64(&it)) << e.key;
    EXPECT_EQ(e.as_bool(), bson_iter_as_bool(&it)) << e.key;
    bson_iter_t bridged;
    ASSERT_TRUE(e.to_iter(&bridged));
    EXPECT_EQ(key_of(bridged), e.key);
    EXPECT_EQ(bson_iter_type(&bridged), bson_iter_type(&it));
  }
  BsonElements e(doc.get());
  ASSERT_TRUE(e.find("i"));
  EXPECT_TRUE(e.holds_int32() && e.holds_int());
  EXPECT_EQ(e.int32(), 7);
  ASSERT_TRUE(e.find("l"));
  EXPECT_EQ(e.int64(), -9000000000);
  ASSERT_TRUE(e.find("d"));
  EXPECT_EQ(e.double_value(), 2.5);
  ASSERT_TRUE(e.find("b"));
  EXPECT_TRUE(e.holds_bool());
  ASSERT_TRUE(e.find("t"));
  EXPECT_EQ(e.date_time(), 1700000000123);
  ASSERT_TRUE(e.find("o"));
  bson_oid_t oid;
  bson_oid_init_from_string(&oid, "0123456789abcdef01234567");
  EXPECT_EQ(std::memcmp(e.oid_bytes(), oid.bytes, 12), 0);
  ASSERT_TRUE(e.find("r"));
  std::string_view pattern, options;
  ASSERT_TRUE(e.regex(&pattern, &options));
  EXPECT_EQ(pattern, "^ab");
  EXPECT_EQ(options, "i");
  ASSERT_TRUE(e.find("bin"));
  uint8_t subtype = 0;
  std::string_view bytes;
  ASSERT_TRUE(e.binary(&subtype, &bytes));
  EXPECT_EQ(subtype, 4);
  EXPECT_EQ(bytes, std::string_view("\x01\x02\x03", 3));
  ASSERT_TRUE(e.find("dec"));
  bson_decimal128_t expected;
  bson_decimal128_from_string("1.5", &expected);
  EXPECT_EQ(e.decimal128().low, expected.low);
  EXPECT_EQ(e.decimal128().high, expected.high);
  ASSERT_TRUE(e.find("ts"));
  EXPECT_EQ(e.timestamp_seconds(), 5u);
  EXPECT_EQ(e.timestamp_increment(), 9u);
}

TEST(BsonRead, ElementsCopyAndPathsFind) {
  auto doc = json(R"({"cursor": {"id": {"$numberLong": "42"}, "firstBatch": [{"a": 1}]}, "n": 3})");
  BsonElements found(doc.get());
  ASSERT_TRUE(find_path(view(doc), "cursor.id", &found));
  EXPECT_EQ(found.as_int64(), 42);
  ASSERT_TRUE(find_path(view(doc), "cursor.firstBatch.0.a", &found));
  EXPECT_EQ(found.int32(), 1);
  EXPECT_FALSE(find_path(view(doc), "cursor.missing", &found));
  EXPECT_FALSE(find_path(view(doc), "n.x", &found));
  EXPECT_EQ(int_field(view(doc), "n"), 3);
  EXPECT_EQ(int_field(view(doc), "absent", -1), -1);

  ScopedBson copy;
  ASSERT_TRUE(find_path(view(doc), "cursor", &found));
  ASSERT_TRUE(found.append_to(copy.get(), "c"));
  BsonElements n(doc.get());
  ASSERT_TRUE(n.find("n"));
  ASSERT_TRUE(n.append_to(copy.get(), "count"));
  EXPECT_EQ(to_json(copy.view()),
            R"({ "c" : { "id" : 42, "firstBatch" : [ { "a" : 1 } ] }, "count" : 3 })");
  bson_value_t value;
  ASSERT_TRUE(n.borrow_value(&value));
  EXPECT_EQ(value.value_type, BSON_TYPE_INT32);
  EXPECT_EQ(value.value.v_int32, 3);
  EXPECT_EQ(n.element_bytes().size(), 1u + 2u + 4u);  // type, "n\0", int32
}

TEST(BsonRead, WellFramedAgreesWithLibbsonsIteratorInit) {
  auto doc = json(R"({"a": 1})");
  const BsonView whole = view(doc);
  bson_iter_t it;
  EXPECT_TRUE(well_framed(whole));
  EXPECT_TRUE(bson_iter_init_from_data(&it, whole.data, whole.size));
  const BsonView shorter{whole.data, whole.size - 1};  // prefix no longer equals the size
  EXPECT_FALSE(well_framed(shorter));
  EXPECT_FALSE(bson_iter_init_from_data(&it, shorter.data, shorter.size));
  std::string no_nul(reinterpret_cast<const char*>(whole.data), whole.size);
  no_nul.back() = 'x';
  const BsonView unterminated{reinterpret_cast<const uint8_t*>(no_nul.data()), whole.size};
  EXPECT_FALSE(well_framed(unterminated));
  EXPECT_FALSE(bson_iter_init_from_data(&it, unterminated.data, unterminated.size));
  EXPECT_FALSE(well_framed(BsonView{}));
}

// The walk reads a key up to its NUL with no bound of its own, relying on the container's
// trailing NUL: a container without one has no elements, as libbson's iterator refuses it.
TEST(BsonRead, ElementsOfAnUnterminatedContainerAreNone) {
  auto doc = json(R"({"abc": 1, "d": {"k": "v"}})");
  std::string bytes(reinterpret_cast<const char*>(view(doc).data), view(doc).size);
  bytes.back() = 'x';
  BsonElements e(reinterpret_cast<const uint8_t*>(bytes.data()),
                 static_cast<uint32_t>(bytes.size()));
  EXPECT_FALSE(e.next());
  EXPECT_TRUE(e.malformed());
  // A key that runs into the container's end is malformed too.
  const uint8_t key_to_end[] = {8, 0, 0, 0, BSON_TYPE_INT32, 'a', 'b', 0};
  BsonElements k(key_to_end, sizeof key_to_end);
  EXPECT_FALSE(k.next());
  EXPECT_TRUE(k.malformed());
}

// The types the walk reads from its table and the ones it reads out of line step the same.
TEST(BsonRead, ElementsStepOverEveryType) {
  auto doc = json(R"j({"s": "x", "i": 1, "l": {"$numberLong": "2"}, "d": 1.5, "b": true,
      "n": null, "o": {"$oid": "0123456789abcdef01234567"}, "t": {"$date": 1},
      "r": {"$regularExpression": {"pattern": "^a", "options": "i"}},
      "bin": {"$binary": {"base64": "AQI=", "subType": "00"}}, "c": {"$code": "f()"},
      "dec": {"$numberDecimal": "1.5"}, "a": [1, 2], "sub": {"k": 1}, "end": 7})j");
  std::string keys;
  BsonElements e(doc.get());
  while (e.next()) keys += std::string(e.key) + ",";
  EXPECT_FALSE(e.malformed());
  EXPECT_EQ(keys, "s,i,l,d,b,n,o,t,r,bin,c,dec,a,sub,end,");
  BsonElements last(doc.get());
  ASSERT_TRUE(last.find("end"));
  EXPECT_EQ(last.int32(), 7);
}

}  // namespace
}  // namespace docguard::codec
