// What a traffic recording keeps of a message: secrets replaced or dropped, everything else as
// sent, and a marker (never the bytes) for what cannot be read.
#include "docguard/codec/recording_redaction.h"

#include <gtest/gtest.h>

#include <string>

#include "compress_message.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"
#include "test_messages.h"

namespace docguard::codec {
namespace {

using testing::json;
using testing::op_msg;

std::string as_text(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

// The body of an OP_MSG as canonical JSON.
std::string body_json(const std::vector<uint8_t>& message) {
  const OpMsg msg = OpMsg::parse(message);
  bson_t doc = msg.body.borrow();
  char* text = bson_as_relaxed_extended_json(&doc, nullptr);
  std::string out(text);
  bson_free(text);
  return out;
}

TEST(RecordingRedaction, PlainCommandIsKeptByteForByte) {
  const auto find = op_msg(R"({"find": "orders", "filter": {"a": 1}, "$db": "shop"})", 7);
  const auto out = redact_request(find, kDefaultMaxMessageBytes);
  EXPECT_EQ(out.bytes, find);
  EXPECT_FALSE(out.sensitive);
  EXPECT_FALSE(out.marker);
}

TEST(RecordingRedaction, SaslPayloadsAreReplacedAndTheReplyToo) {
  const std::string secret = "n,,n=alice,r=c2VjcmV0LW5vbmNl";
  const auto start = op_msg((R"({"saslStart": 1, "mechanism": "SCRAM-SHA-256", "payload": ")" +
                             secret + R"(", "autoAuthorize": 1, "$db": "admin"})")
                                .c_str(),
                            3);
  const auto out = redact_request(start, kDefaultMaxMessageBytes);
  EXPECT_TRUE(out.sensitive);
  EXPECT_EQ(as_text(out.bytes).find(secret), std::string::npos);
  const std::string body = body_json(out.bytes);
  EXPECT_NE(body.find("\"saslStart\""), std::string::npos);
  EXPECT_NE(body.find("SCRAM-SHA-256"), std::string::npos);
  EXPECT_NE(body.find(kRedactedMarker), std::string::npos);
  EXPECT_EQ(OpMsg::parse(out.bytes).header.request_id, 3);

  const auto reply = OpMsgBuilder(9, 3)
                         .body(json(R"({"conversationId": 1, "done": false,
                                        "payload": "r=c2VjcmV0LW5vbmNlc2VydmVy,s=salt,i=4096",
                                        "ok": 1})")
                                   .get())
                         .finish();
  const auto safe_reply = redact_reply(reply, /*to_sensitive=*/true, kDefaultMaxMessageBytes);
  EXPECT_EQ(as_text(safe_reply.bytes).find("salt"), std::string::npos);
  EXPECT_NE(body_json(safe_reply.bytes).find("\"conversationId\""), std::string::npos);
}

TEST(RecordingRedaction, PasswordsOfUserCommandsAreReplaced) {
  for (const char* command : {"createUser", "updateUser"}) {
    const auto msg = op_msg((std::string(R"({")") + command +
                             R"(": "bob", "pwd": "hunter2-secret", "roles": [], "$db": "admin"})")
                                .c_str());
    const auto out = redact_request(msg, kDefaultMaxMessageBytes);
    EXPECT_EQ(as_text(out.bytes).find("hunter2-secret"), std::string::npos) << command;
    EXPECT_NE(body_json(out.bytes).find("\"bob\""), std::string::npos) << command;
  }
}

TEST(RecordingRedaction, ADbCutShortByANulIsJudgedAsItsReaderWouldSendIt) {
  // The server refuses it; a C-string reader (libmongoc) would run it on "encryption".
  ScopedBson body;
  BSON_APPEND_UTF8(body.get(), "find", "__keyVault");
  bson_t filter;
  BSON_APPEND_DOCUMENT_BEGIN(body.get(), "filter", &filter);
  BSON_APPEND_UTF8(&filter, "keyAltNames", "planted-key-name");
  bson_append_document_end(body.get(), &filter);
  bson_append_utf8(body.get(), "$db", 3, "encryption\0x", 12);
  const auto msg = OpMsgBuilder(1, 0).body(body.bytes()).finish();
  const auto out = redact_request(msg, kDefaultMaxMessageBytes);
  EXPECT_TRUE(out.sensitive);
  EXPECT_EQ(as_text(out.bytes).find("planted-key-name"), std::string::npos);
}

TEST(RecordingRedaction, ClusterTimeIsDroppedAndSpeculativeAuthenticateReplaced) {
  const auto hello = op_msg(
      R"({"hello": 1, "speculativeAuthenticate": {"saslStart": 1, "payload": "spec-secret"},
          "$clusterTime": {"clusterTime": {"$timestamp": {"t": 1, "i": 1}},
                           "signature": {"hash": "c2lnbmF0dXJl", "keyId": 7}},
          "$db": "admin"})");
  const auto out = redact_request(hello, kDefaultMaxMessageBytes);
  const std::string body = body_json(out.bytes);
  EXPECT_EQ(body.find("$clusterTime"), std::string::npos);
  EXPECT_EQ(body.find("spec-secret"), std::string::npos);
  EXPECT_NE(body.find("speculativeAuthenticate"), std::string::npos);
  const auto reply = redact_reply(
      OpMsgBuilder(2, 1)
          .body(json(R"({"ok": 1, "speculativeAuthenticate": {"payload": "server-first"},
                         "$clusterTime": {"signature": {"keyId": 7}}})")
                    .get())
          .finish(),
      false, kDefaultMaxMessageBytes);
  EXPECT_EQ(as_text(reply.bytes).find("server-first"), std::string::npos);
  EXPECT_EQ(as_text(reply.bytes).find("signature"), std::string::npos);
}

TEST(RecordingRedaction, DocumentSequencesSurviveARewrite) {
  const auto a = json(R"({"_id": 1})");
  const auto b = json(R"({"_id": 2})");
  const auto body = json(R"({"insert": "c", "$db": "d", "$clusterTime": {"x": 1}})");
  const auto msg = OpMsgBuilder(5, 0)
                       .body(body.get())
                       .sequence("documents", {testing::view(a), testing::view(b)})
                       .finish();
  const auto out = redact_request(msg, kDefaultMaxMessageBytes);
  const OpMsg parsed = OpMsg::parse(out.bytes);
  ASSERT_EQ(parsed.sequences.size(), 1u);
  EXPECT_EQ(parsed.sequences[0].documents.size(), 2u);
  EXPECT_EQ(body_json(out.bytes).find("$clusterTime"), std::string::npos);
}

TEST(RecordingRedaction, CompressedMessagesComeOutDecompressedAndRedacted) {
  const auto msg =
      op_msg(R"({"saslContinue": 1, "payload": "c=biws,r=zstd-secret", "$db": "admin"})");
  const auto compressed = testing::compress_message(msg, Compressor::kZstd);
  const auto out = redact_request(compressed, kDefaultMaxMessageBytes);
  EXPECT_TRUE(out.sensitive);
  EXPECT_EQ(read_header(out.bytes.data()).op_code, OpCode::kMsg);
  EXPECT_EQ(as_text(out.bytes).find("zstd-secret"), std::string::npos);
}

TEST(RecordingRedaction, LegacyHelloOverOpQueryIsRedacted) {
  const auto query =
      json(R"({"isMaster": 1, "speculativeAuthenticate": {"payload": "legacy-secret"}})");
  std::vector<uint8_t> msg(kHeaderSize);
  const auto le32 = [&msg](int32_t v) {
    msg.resize(msg.size() + 4);
    store_le32(msg.data() + msg.size() - 4, v);
  };
  le32(0);
  const std::string ns = "admin.$cmd";
  msg.insert(msg.end(), ns.begin(), ns.end());
  msg.push_back(0);
  le32(0);
  le32(-1);
  const auto q = testing::view(query).bytes();
  msg.insert(msg.end(), q.begin(), q.end());
  write_header(msg.data(), {static_cast<int32_t>(msg.size()), 11, 0, OpCode::kQuery});
  const auto out = redact_request(msg, kDefaultMaxMessageBytes);
  EXPECT_FALSE(out.marker);
  EXPECT_EQ(as_text(out.bytes).find("legacy-secret"), std::string::npos);
  const OpQuery parsed = OpQuery::parse(out.bytes);
  EXPECT_EQ(parsed.full_collection_name, "admin.$cmd");
  EXPECT_EQ(parsed.header.request_id, 11);
}

TEST(RecordingRedaction, UnreadableMessagesBecomeMarkersNotBytes) {
  auto msg = op_msg(R"({"saslStart": 1, "payload": "broken-secret", "$db": "admin"})", 4);
  msg[21] = static_cast<uint8_t>(msg[21] + 1);  // the body's length now overruns the message
  const auto out = redact_request(msg, kDefaultMaxMessageBytes);
  EXPECT_TRUE(out.marker);
  EXPECT_EQ(as_text(out.bytes).find("broken-secret"), std::string::npos);
  EXPECT_NE(body_json(out.bytes).find(kUnrecordedKey), std::string::npos);
  EXPECT_EQ(OpMsg::parse(out.bytes).header.request_id, 4);

  const std::vector<uint8_t> short_one = {1, 2, 3};
  EXPECT_TRUE(redact_reply(short_one, false, kDefaultMaxMessageBytes).marker);
  std::vector<uint8_t> insert(32, 0);  // legacy OP_INSERT: not recorded
  write_header(insert.data(), {32, 1, 0, OpCode::kInsert});
  EXPECT_TRUE(redact_request(insert, kDefaultMaxMessageBytes).marker);
  EXPECT_FALSE(redact_request(insert, kDefaultMaxMessageBytes).sensitive);
  // A legacy OP_GET_MORE may continue a sensitive cursor: its reply is kept to its status.
  std::vector<uint8_t> get_more(40, 0);
  write_header(get_more.data(), {40, 2, 0, OpCode::kGetMore});
  const auto legacy = redact_request(get_more, kDefaultMaxMessageBytes);
  EXPECT_TRUE(legacy.marker);
  EXPECT_TRUE(legacy.sensitive);
}

}  // namespace
}  // namespace docguard::codec
