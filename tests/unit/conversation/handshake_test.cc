#include "docguard/conversation/handshake.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "docguard/codec/command_view.h"
#include "docguard/codec/op_query.h"
#include "test_messages.h"

namespace docguard::conversation {
namespace {
namespace DOCGUARD_UNITY_ID {

using testing::json;
using testing::view;

// A replica-set member's hello reply, as mongod sends it.
constexpr const char* kMemberReply = R"({
  "topologyVersion": {"processId": {"$oid": "650000000000000000000000"}, "counter": 6},
  "hosts": ["db1:27017", "db2:27017"], "setName": "rs0", "setVersion": 3,
  "isWritablePrimary": true, "secondary": false, "primary": "db1:27017", "me": "db1:27017",
  "electionId": {"$oid": "7fffffff0000000000000001"}, "maxBsonObjectSize": 16777216,
  "maxMessageSizeBytes": 48000000, "maxWriteBatchSize": 100000,
  "localTime": {"$date": 1700000000000}, "logicalSessionTimeoutMinutes": 30,
  "connectionId": 42, "minWireVersion": 0, "maxWireVersion": 21, "readOnly": false,
  "compression": ["zstd"], "ok": 1.0})";

bool has(const codec::OwnedBson& doc, const char* key) {
  bson_iter_t it;
  return bson_iter_init_find(&it, doc.get(), key);
}

TEST(Handshake, MongosPersonaHidesMembersAndKeepsSessionFields) {
  auto upstream = json(kMemberReply);
  PersonaSettings settings{Persona::kMongos, "", "127.0.0.1:27018", 48'000'000};
  auto out = rewrite_hello_reply(view(upstream),
                                 {codec::Compressor::kSnappy, codec::Compressor::kZstd}, settings);
  for (const char* gone :
       {"hosts", "setName", "primary", "me", "electionId", "topologyVersion", "setVersion"}) {
    EXPECT_FALSE(has(out.reply, gone)) << gone;
  }
  for (const char* kept : {"logicalSessionTimeoutMinutes", "connectionId", "minWireVersion",
                           "maxWireVersion", "maxBsonObjectSize", "isWritablePrimary", "ok"}) {
    EXPECT_TRUE(has(out.reply, kept)) << kept;
  }
  EXPECT_EQ(codec::find_string(out.reply.view(), "msg"), "isdbgrid");
  ASSERT_EQ(out.upstream_compressors.size(), 1u);
  EXPECT_EQ(out.upstream_compressors[0], codec::Compressor::kZstd);
  const std::string text = codec::to_json(out.reply.view());
  EXPECT_NE(text.find(R"("compression" : [ "snappy", "zstd" ])"), std::string::npos) << text;
  EXPECT_EQ(text.find("db1"), std::string::npos);
}

TEST(Handshake, ReplicaSetPersonaListsOnlyDocguard) {
  auto upstream = json(kMemberReply);
  PersonaSettings settings{Persona::kReplicaSet, "docguard", "proxy.local:27018", 48'000'000};
  auto out = rewrite_hello_reply(view(upstream), {}, settings);
  const std::string text = codec::to_json(out.reply.view());
  EXPECT_EQ(codec::find_string(out.reply.view(), "setName"), "docguard");
  EXPECT_EQ(codec::find_string(out.reply.view(), "primary"), "proxy.local:27018");
  EXPECT_NE(text.find(R"("hosts" : [ "proxy.local:27018" ])"), std::string::npos) << text;
  EXPECT_EQ(text.find("db2"), std::string::npos);
  EXPECT_FALSE(has(out.reply, "compression"));
}

TEST(Handshake, LegacyIsMasterKeepsItsStyleAndLimitsMessageSize) {
  auto upstream =
      json(R"({"ismaster": true, "maxMessageSizeBytes": 48000000, "maxWireVersion": 17, "ok": 1})");
  PersonaSettings settings{Persona::kMongos, "", "127.0.0.1:1", 1'000'000};
  auto out = rewrite_hello_reply(view(upstream), {}, settings);
  EXPECT_TRUE(has(out.reply, "ismaster"));
  EXPECT_FALSE(has(out.reply, "isWritablePrimary"));
  bson_iter_t it;
  ASSERT_TRUE(bson_iter_init_find(&it, out.reply.get(), "maxMessageSizeBytes"));
  EXPECT_EQ(bson_iter_as_int64(&it), 1'000'000);
}

TEST(Handshake, RejectsCorruptNestedDocuments) {
  // Regression (fuzz_op_query): a well-framed reply whose nested document is corrupt.
  auto upstream = json(R"({"ismaster": true, "nested": {"a": 1}, "ok": 1})");
  std::vector<uint8_t> bytes(bson_get_data(upstream.get()),
                             bson_get_data(upstream.get()) + upstream->len);
  // The nested document starts after: int32 len, 0x08 "ismaster\0" 0x01, 0x03 "nested\0".
  const size_t nested = 4 + 1 + 9 + 1 + 1 + 7;
  bytes[nested] = 0x40;  // nested length now overruns the outer document
  PersonaSettings settings{Persona::kMongos, "", "127.0.0.1:1", 1 << 20};
  EXPECT_THROW(
      rewrite_hello_reply(codec::BsonView{bytes.data(), static_cast<uint32_t>(bytes.size())}, {},
                          settings),
      codec::ProtocolError);
}

TEST(Handshake, FuzzRegressionsGiveValidRepliesOrErrors) {
  // Inputs that once crashed fuzz_op_query (a key that is not UTF-8; a corrupt nested document):
  // each OP_REPLY document is rewritten into valid BSON, or refused with ProtocolError.
  const std::filesystem::path dir =
      std::filesystem::path(DOCGUARD_SOURCE_DIR) / "tests/fuzz/regressions/fuzz_op_query";
  PersonaSettings settings{Persona::kReplicaSet, "rs", "127.0.0.1:1", 1 << 20};
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::vector<uint8_t> message(codec::kHeaderSize);
    message.insert(message.end(), std::istreambuf_iterator<char>(in), {});
    codec::write_header(message.data(), codec::MsgHeader{static_cast<int32_t>(message.size()), 1, 0,
                                                         codec::OpCode::kReply});
    ++files;
    try {
      for (const auto& doc : codec::OpReply::parse(message).documents) {
        auto out = rewrite_hello_reply(doc, {codec::Compressor::kZstd}, settings);
        EXPECT_TRUE(codec::bson_structure_valid(out.reply.view(), nullptr)) << entry.path();
      }
    } catch (const codec::ProtocolError&) {
    }
  }
  EXPECT_GE(files, 1u);
}

TEST(Handshake, ClientCompressorsAndAppName) {
  auto hello = json(R"({"hello": 1, "compression": ["zstd", "lz4", "zlib", "snappy", "noop"],
                        "client": {"application": {"name": "shop-api"}}})");
  auto list = supported_compressors(view(hello));
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0], codec::Compressor::kZstd);
  EXPECT_EQ(list[1], codec::Compressor::kZlib);
  EXPECT_EQ(client_app_name(view(hello)), "shop-api");
  EXPECT_TRUE(codec::is_hello_command(view(hello)));
  auto ping = json(R"({"ping": 1})");
  EXPECT_FALSE(codec::is_hello_command(view(ping)));
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::conversation
