#include "docguard/codec/op_msg.h"

#include <gtest/gtest.h>

#include "docguard/codec/crc32c.h"
#include "test_messages.h"

namespace docguard::codec {
namespace {

using testing::json;
using testing::view;

std::string kind_of(const std::vector<uint8_t>& m) {
  try {
    OpMsg::parse(m);
  } catch (const ProtocolError& e) {
    return name(e.kind());
  }
  return "ok";
}

TEST(Crc32c, KnownVector) {
  const char* s = "123456789";
  EXPECT_EQ(crc32c(Bytes{reinterpret_cast<const uint8_t*>(s), 9}), 0xE3069283u);
}

TEST(OpMsg, RoundTripsBodyAndSequence) {
  auto body = json(R"({"insert": "c", "$db": "test", "ordered": true})");
  auto d1 = json(R"({"_id": 1, "a": [1, 2]})");
  auto d2 = json(R"({"_id": 2})");
  auto bytes =
      OpMsgBuilder(42, 0).body(body.get()).sequence("documents", {view(d1), view(d2)}).finish();
  const OpMsg msg = OpMsg::parse(bytes);
  EXPECT_EQ(msg.header.request_id, 42);
  EXPECT_EQ(msg.header.op_code, OpCode::kMsg);
  EXPECT_EQ(msg.body.size, body->len);
  ASSERT_EQ(msg.sequences.size(), 1u);
  EXPECT_EQ(msg.sequences[0].identifier, "documents");
  ASSERT_EQ(msg.sequences[0].documents.size(), 2u);
  EXPECT_EQ(msg.sequences[0].documents[1].size, d2->len);
  // Zero copy: views point into the message buffer.
  EXPECT_GE(msg.body.data, bytes.data());
  EXPECT_LT(msg.body.data, bytes.data() + bytes.size());
}

TEST(OpMsg, VerifiesChecksum) {
  auto bytes = testing::op_msg(R"({"ping": 1, "$db": "admin"})", 1, op_msg_flags::kChecksumPresent);
  // Builder never writes a checksum; add one by hand.
  store_le32(bytes.data() + kHeaderSize, static_cast<int32_t>(op_msg_flags::kChecksumPresent));
  bytes.resize(bytes.size() + 4);
  store_le32(bytes.data(), static_cast<int32_t>(bytes.size()));
  recompute_checksum(bytes);
  EXPECT_EQ(kind_of(bytes), "ok");
  EXPECT_TRUE(OpMsg::parse(bytes).checksum_present);
  bytes[bytes.size() - 6] ^= 0x01;  // flip a bit inside the body
  EXPECT_EQ(kind_of(bytes), "checksum");
}

TEST(OpMsg, RejectsUnknownRequiredFlag) {
  auto bytes = testing::op_msg(R"({"ping": 1, "$db": "admin"})", 1, 1u << 5);
  EXPECT_EQ(kind_of(bytes), "unknown_required_flag");
}

TEST(OpMsg, ClearsUnknownOptionalFlags) {
  auto bytes = testing::op_msg(R"({"ping": 1, "$db": "admin"})", 1,
                               (1u << 20) | op_msg_flags::kExhaustAllowed);
  EXPECT_EQ(kind_of(bytes), "ok");
  EXPECT_TRUE(clear_unknown_optional_flags(bytes));
  EXPECT_EQ(OpMsg::parse(bytes).flags, op_msg_flags::kExhaustAllowed);
  EXPECT_FALSE(clear_unknown_optional_flags(bytes));
}

TEST(OpMsg, RejectsMissingAndDuplicateBodies) {
  auto body = json(R"({"ping": 1})");
  auto two = OpMsgBuilder(1, 0).body(body.get()).body(body.get()).finish();
  EXPECT_EQ(kind_of(two), "bad_op_msg");
  auto d = json(R"({"a": 1})");
  auto none = OpMsgBuilder(1, 0).sequence("documents", {view(d)}).finish();
  EXPECT_EQ(kind_of(none), "bad_op_msg");
}

TEST(OpMsg, RejectsUnknownSectionKind) {
  auto bytes = testing::op_msg(R"({"ping": 1})");
  bytes[kHeaderSize + 4] = 2;
  EXPECT_EQ(kind_of(bytes), "bad_op_msg");
}

TEST(OpMsg, RejectsDuplicateIdentifiersAndBodyClash) {
  auto body = json(R"({"insert": "c", "$db": "t"})");
  auto d = json(R"({"a": 1})");
  auto dup = OpMsgBuilder(1, 0)
                 .body(body.get())
                 .sequence("documents", {view(d)})
                 .sequence("documents", {view(d)})
                 .finish();
  EXPECT_EQ(kind_of(dup), "bad_op_msg");
  auto clash_body = json(R"({"insert": "c", "$db": "t", "documents": []})");
  auto clash = OpMsgBuilder(1, 0).body(clash_body.get()).sequence("documents", {view(d)}).finish();
  EXPECT_EQ(kind_of(clash), "bad_op_msg");
  // Any sequence's identifier clashes; a key that only shares a prefix does not.
  auto second_body = json(R"({"bulkWrite": 1, "$db": "admin", "nsInfo": []})");
  auto second = OpMsgBuilder(1, 0)
                    .body(second_body.get())
                    .sequence("ops", {view(d)})
                    .sequence("nsInfo", {view(d)})
                    .finish();
  EXPECT_EQ(kind_of(second), "bad_op_msg");
  auto prefix_body = json(R"({"insert": "c", "$db": "t", "document": 1, "documentsX": 2})");
  auto prefix =
      OpMsgBuilder(1, 0).body(prefix_body.get()).sequence("documents", {view(d)}).finish();
  EXPECT_EQ(kind_of(prefix), "ok");
  // Keys are first told apart by length: one of an identifier's length with other letters does
  // not clash, and identifiers of 64 bytes or more are compared whole.
  auto same_length_body = json(R"({"insert": "c", "$db": "t", "documentz": 1})");
  auto same_length =
      OpMsgBuilder(1, 0).body(same_length_body.get()).sequence("documents", {view(d)}).finish();
  EXPECT_EQ(kind_of(same_length), "ok");
  const std::string long_name(70, 'k');
  const std::string long_json = R"({"insert": "c", "$db": "t", ")" + long_name + R"(": 1})";
  auto long_body = json(long_json.c_str());
  auto long_clash =
      OpMsgBuilder(1, 0).body(long_body.get()).sequence(long_name, {view(d)}).finish();
  EXPECT_EQ(kind_of(long_clash), "bad_op_msg");
  const std::string other_long(71, 'k');
  auto long_other =
      OpMsgBuilder(1, 0).body(long_body.get()).sequence(other_long, {view(d)}).finish();
  EXPECT_EQ(kind_of(long_other), "ok");
}

std::string error_of(const std::vector<uint8_t>& m) {
  try {
    OpMsg::parse(m);
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "ok";
}

TEST(OpMsg, BodyClashNamesTheFirstClashingFieldAfterEveryBsonCheck) {
  // The clash is found while the body is validated; the first body field that repeats an
  // identifier is named, whatever order the sequences came in.
  auto body = json(R"({"bulkWrite": 1, "nsInfo": [], "ops": [], "$db": "admin"})");
  auto d = json(R"({"a": 1})");
  auto both = OpMsgBuilder(1, 0)
                  .body(body.get())
                  .sequence("ops", {view(d)})
                  .sequence("nsInfo", {view(d)})
                  .finish();
  EXPECT_EQ(error_of(both), "identifier 'nsInfo' appears in both the body and a sequence");
  // Malformed BSON is reported first, in the body or in a sequence's document.
  auto bad_document = both;
  bad_document[bad_document.size() - d->len] = 0x7f;
  EXPECT_EQ(kind_of(bad_document), "bad_bson");
  auto bad_body = both;
  bad_body[kHeaderSize + 4 + 1 + 4] = 0x42;  // the body's first element type
  EXPECT_EQ(kind_of(bad_body), "bad_bson");
  // The same body without sequences, or with other identifiers, is fine.
  EXPECT_EQ(kind_of(OpMsgBuilder(1, 0).body(body.get()).finish()), "ok");
  EXPECT_EQ(kind_of(OpMsgBuilder(1, 0).body(body.get()).sequence("nsInf", {view(d)}).finish()),
            "ok");
}

TEST(OpMsg, RejectsOverrunsAndBadBson) {
  auto body = json(R"({"insert": "c", "$db": "t"})");
  auto d = json(R"({"a": 1})");
  auto bytes = OpMsgBuilder(1, 0).body(body.get()).sequence("documents", {view(d)}).finish();
  // Section size larger than the message.
  auto over = bytes;
  store_le32(over.data() + kHeaderSize + 4 + 1 + body->len + 1, 10'000);
  EXPECT_EQ(kind_of(over), "bad_op_msg");
  // BSON length larger than what is left.
  auto bad = testing::op_msg(R"({"ping": 1})");
  store_le32(bad.data() + kHeaderSize + 5, 1'000);
  EXPECT_EQ(kind_of(bad), "bad_bson");
  // Missing trailing NUL.
  auto nul = testing::op_msg(R"({"ping": 1})");
  nul.back() = 7;
  EXPECT_EQ(kind_of(nul), "bad_bson");
  // Truncated: messageLength disagrees with the frame.
  auto cut = testing::op_msg(R"({"ping": 1})");
  cut.pop_back();
  EXPECT_EQ(kind_of(cut), "bad_length");
}

TEST(OpMsg, RejectsCorruptEmbeddedDocumentLengths) {
  // Regression (fault suite): an embedded document whose length overruns its parent was walked
  // by the rules as if valid, and failingDocumentId came from the wrong bytes.
  auto body = json(R"({"insert": "c", "$db": "t"})");
  auto d = json(R"({"_id": 1, "d": {"a": 1}, "arr": [0, 1, 2]})");
  auto bytes = OpMsgBuilder(1, 0).body(body.get()).sequence("documents", {view(d)}).finish();
  // {"_id": int32} is 4 + (1+4+4); then "d": type byte, "d\0", then the embedded length.
  const size_t doc_start = bytes.size() - d->len;
  const size_t embedded_len = doc_start + 4 + 1 + 4 + 4 + 1 + 2;
  ASSERT_EQ(load_le32(bytes.data() + embedded_len), 12);
  store_le32(bytes.data() + embedded_len, 300);
  EXPECT_EQ(kind_of(bytes), "bad_bson");
}

TEST(OpMsg, SequenceDocumentsMustBeWellFramed) {
  auto body = json(R"({"insert": "c", "$db": "t"})");
  auto d = json(R"({"a": 1})");
  auto bytes = OpMsgBuilder(1, 0).body(body.get()).sequence("documents", {view(d)}).finish();
  bytes[bytes.size() - d->len] = 0x7f;  // corrupt the document's length
  EXPECT_EQ(kind_of(bytes), "bad_bson");
}

}  // namespace
}  // namespace docguard::codec
