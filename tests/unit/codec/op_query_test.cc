#include "docguard/codec/op_query.h"

#include <gtest/gtest.h>

#include "test_messages.h"

namespace docguard::codec {
namespace {

std::vector<uint8_t> legacy_hello(const char* ns) {
  auto q = testing::json(R"({"isMaster": 1, "helloOk": true})");
  std::vector<uint8_t> m(kHeaderSize + 4);
  store_le32(m.data() + kHeaderSize, 0);
  m.insert(m.end(), ns, ns + strlen(ns) + 1);
  uint8_t skip_return[8] = {0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
  m.insert(m.end(), skip_return, skip_return + 8);
  m.insert(m.end(), bson_get_data(q.get()), bson_get_data(q.get()) + q->len);
  write_header(m.data(), MsgHeader{static_cast<int32_t>(m.size()), 3, 0, OpCode::kQuery});
  return m;
}

TEST(OpQuery, ParsesLegacyHello) {
  auto m = legacy_hello("admin.$cmd");
  auto q = OpQuery::parse(m);
  EXPECT_EQ(q.full_collection_name, "admin.$cmd");
  EXPECT_EQ(q.number_to_return, -1);
  EXPECT_EQ(find_string(q.query, "missing"), "");
  EXPECT_TRUE(q.return_fields_selector.empty());
}

TEST(OpQuery, RejectsUnterminatedName) {
  std::vector<uint8_t> m(kHeaderSize + 4 + 20, 'a');
  write_header(m.data(), MsgHeader{static_cast<int32_t>(m.size()), 3, 0, OpCode::kQuery});
  EXPECT_THROW(OpQuery::parse(m), ProtocolError);
}

TEST(OpReply, BuildsAndParses) {
  auto doc = testing::json(R"({"ok": 1, "ismaster": true})");
  auto m = build_op_reply(5, 3, Bytes{bson_get_data(doc.get()), doc->len});
  auto r = OpReply::parse(m);
  EXPECT_EQ(r.header.response_to, 3);
  EXPECT_EQ(r.number_returned, 1);
  ASSERT_EQ(r.documents.size(), 1u);
  EXPECT_EQ(r.documents[0].size, doc->len);
}

}  // namespace
}  // namespace docguard::codec
