// What a request is, by the server's rule: the command is the first member (a legacy wrapper
// only when it is the first), the database `$db` as bytes, and what the server refuses by form.
#include "docguard/codec/request_identity.h"

#include <gtest/gtest.h>

#include <string>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/message.h"
#include "docguard/codec/op_msg.h"
#include "test_messages.h"

namespace docguard::codec {
namespace {

std::vector<uint8_t> op_query(std::string_view ns, const BsonView& query) {
  std::vector<uint8_t> b(kHeaderSize + 4, 0);
  for (const char c : ns) b.push_back(static_cast<uint8_t>(c));
  b.push_back(0);
  b.resize(b.size() + 8, 0);
  for (uint32_t i = 0; i < query.size; ++i) b.push_back(query.data[i]);
  write_header(b.data(), MsgHeader{static_cast<int32_t>(b.size()), 7, 0, OpCode::kQuery});
  return b;
}

// An OP_MSG whose $db is given as raw bytes (a NUL inside is kept).
std::vector<uint8_t> msg_with_db(std::string_view command, std::string_view db) {
  ScopedBson body;
  bson_append_utf8(body.get(), command.data(), static_cast<int>(command.size()), "items", 5);
  bson_append_utf8(body.get(), "$db", 3, db.data(), static_cast<int>(db.size()));
  return OpMsgBuilder(3, 0).body(body.bytes()).finish();
}

TEST(RequestIdentity, AnOpMsgIsItsFirstMemberOnItsDb) {
  const auto m = testing::request(R"({"find": "items", "filter": {}, "$db": "shop"})");
  const RequestIdentity id = identify_request(m->bytes);
  EXPECT_EQ(id.form, RequestForm::kMsg);
  EXPECT_TRUE(id.accepted());
  EXPECT_EQ(id.command, "find");
  EXPECT_EQ(id.database, "shop");
  EXPECT_EQ(id.collection, "items");
}

TEST(RequestIdentity, ADbTheServerRefusesIsRefused) {
  const std::string with_nul("encryption\0x", 12);
  for (const std::string& db : {with_nul, std::string("admin\0", 6), std::string(""),
                                std::string("a.b"), std::string("a b"), std::string(64, 'd')}) {
    const auto message = msg_with_db("delete", db);
    const RequestIdentity id = identify_request(message);
    EXPECT_FALSE(id.accepted()) << db;
    EXPECT_EQ(id.refusal_code, form_codes::kInvalidNamespace) << db;
  }
  const auto none = testing::request(R"({"delete": "items", "deletes": []})");
  EXPECT_EQ(identify_request(none->bytes).refusal_code, form_codes::kMissingDb);
  const auto two = testing::request(R"({"delete": "items", "$db": "shop", "$db": "admin"})");
  EXPECT_EQ(identify_request(two->bytes).refusal_code, form_codes::kInvalidNamespace);
  const auto same = testing::request(R"({"find": "items", "$db": "shop", "$db": "shop"})");
  EXPECT_TRUE(identify_request(same->bytes).accepted());
  const auto number = testing::request(R"({"find": "items", "$db": 1})");
  EXPECT_FALSE(identify_request(number->bytes).accepted());
  EXPECT_TRUE(identify_request(msg_with_db("find", std::string(63, 'd'))).accepted());
  EXPECT_TRUE(identify_request(msg_with_db("saslStart", "$external")).accepted());
}

TEST(RequestIdentity, AWrapperIsOneOnlyWhenItIsTheFirstMember) {
  // The server reads {ping: 1, $query: {delete: ...}} as a ping: a wrapper that is not the
  // first member is just another field.
  const testing::Bson hidden(
      R"({"ping": 1, "$query": {"delete": "system.users", "deletes": [{"q": {}, "limit": 0}]}})");
  // The identity views its message: each message outlives it.
  const auto hidden_message = op_query("admin.$cmd", hidden.view());
  const RequestIdentity ping = identify_request(hidden_message);
  EXPECT_EQ(ping.form, RequestForm::kLegacyCommand);
  EXPECT_EQ(ping.command, "ping");
  EXPECT_EQ(ping.database, "admin");
  EXPECT_EQ(ping.refusal_code, form_codes::kUnsupportedOpQuery);

  const testing::Bson wrapped(R"({"$query": {"isMaster": 1}, "$readPreference": {"mode": "p"}})");
  const auto wrapped_message = op_query("admin.$cmd", wrapped.view());
  const RequestIdentity hello = identify_request(wrapped_message);
  EXPECT_EQ(hello.command, "isMaster");
  EXPECT_TRUE(hello.accepted());
  const testing::Bson query_key(R"({"query": {"delete": "items"}})");
  const auto query_message = op_query("shop.$cmd", query_key.view());
  const RequestIdentity deleted = identify_request(query_message);
  EXPECT_EQ(deleted.command, "delete");
  EXPECT_EQ(deleted.refusal_code, form_codes::kUnsupportedOpQuery);
}

TEST(RequestIdentity, LegacyRequestsTheServerStillTakesAndTheRest) {
  const testing::Bson hello(R"({"hello": 1})");
  EXPECT_TRUE(identify_request(op_query("admin.$cmd", hello.view())).accepted());
  const testing::Bson with_db(R"({"hello": 1, "$db": "admin"})");
  EXPECT_EQ(identify_request(op_query("admin.$cmd", with_db.view())).refusal_code,
            form_codes::kDbInOpQuery);
  const testing::Bson filter(R"({"a": 1})");
  const auto find_message = op_query("shop.items", filter.view());
  const RequestIdentity find = identify_request(find_message);
  EXPECT_EQ(find.form, RequestForm::kLegacyQuery);
  EXPECT_EQ(find.refusal_code, form_codes::kOpQueryRemoved);
  const testing::Bson insert(R"({"insert": "items", "documents": []})");
  EXPECT_EQ(identify_request(op_query("shop.$cmd", insert.view())).refusal_code,
            form_codes::kUnsupportedOpQuery);
}

TEST(RequestIdentity, WhatCannotBeReadIsMalformedNeverAThrow) {
  std::vector<uint8_t> short_message(10, 0);
  EXPECT_EQ(identify_request(short_message).form, RequestForm::kMalformed);
  auto m = testing::request(R"({"find": "items", "$db": "shop"})");
  m->bytes[kHeaderSize + 1] = 0x7f;  // the body's length, now past the message
  EXPECT_EQ(identify_request(m->bytes).form, RequestForm::kMalformed);
}

TEST(RequestIdentity, FormRefusalsAreTheServersParseAndFormCodes) {
  for (int32_t code : {2, 9, 14, 59, 73, 352, 40414, 40415, 40571, 5739101}) {
    EXPECT_TRUE(is_form_refusal_code(code)) << code;
  }
  for (int32_t code : {0, 11000, 121, 13, 50, 112, 251}) EXPECT_FALSE(is_form_refusal_code(code));
}

}  // namespace
}  // namespace docguard::codec
