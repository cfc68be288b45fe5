// Replays recorded real-driver messages through the codec.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "docguard/codec/command_view.h"
#include "docguard/codec/op_compressed.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"
#include "test_messages.h"

namespace docguard::codec {
namespace {

using testing::bson_is_valid;
using testing::read_hex;

std::vector<uint8_t> fixture(const std::string& name) {
  return read_hex(std::filesystem::path(DOCGUARD_FIXTURES) / name);
}

// Rebuilding an OP_MSG from its parsed parts gives back the driver's exact bytes.
void expect_rebuilds_identically(const std::vector<uint8_t>& bytes) {
  const OpMsg msg = OpMsg::parse(bytes);
  ASSERT_FALSE(msg.checksum_present);
  OpMsgBuilder builder(msg.header.request_id, msg.header.response_to, msg.flags);
  // Drivers put the body first; keep the recorded section order.
  builder.body(msg.body.bytes());
  for (const auto& s : msg.sequences) builder.sequence(s.identifier, s.documents);
  EXPECT_EQ(builder.finish(), bytes);
}

TEST(Fixtures, EveryRecordedMessageParses) {
  size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(DOCGUARD_FIXTURES)) {
    if (entry.path().extension() != ".hex") continue;
    SCOPED_TRACE(entry.path().filename().string());
    auto bytes = read_hex(entry.path());
    ASSERT_GE(bytes.size(), kHeaderSize);
    auto header = read_header(bytes.data());
    EXPECT_EQ(static_cast<size_t>(header.message_length), bytes.size());
    if (header.op_code == OpCode::kCompressed) {
      bytes = decompress_message(bytes, kDefaultMaxMessageBytes);
      header = read_header(bytes.data());
    }
    switch (header.op_code) {
      case OpCode::kMsg: {
        const OpMsg msg = OpMsg::parse(bytes);
        EXPECT_TRUE(bson_is_valid(msg.body));
        const auto view = codec::describe(msg);
        EXPECT_FALSE(view.name.empty());
        break;
      }
      case OpCode::kQuery:
        EXPECT_TRUE(bson_is_valid(OpQuery::parse(bytes).query));
        break;
      case OpCode::kReply:
        EXPECT_EQ(OpReply::parse(bytes).documents.size(), 1u);
        break;
      default:
        ADD_FAILURE() << "unexpected opcode " << static_cast<int32_t>(header.op_code);
    }
    ++count;
  }
  EXPECT_GE(count, 8u);
}

TEST(Fixtures, PyMongoInsertManyUsesAKind1Sequence) {
  auto bytes = decompress_message(fixture("pymongo_insert_many_zstd.hex"), kDefaultMaxMessageBytes);
  const OpMsg msg = OpMsg::parse(bytes);
  const auto view = codec::describe(msg);
  EXPECT_EQ(view.kind, codec::CommandKind::kInsert);
  EXPECT_EQ(view.database, "fixtures");
  EXPECT_EQ(view.collection, "items");
  EXPECT_EQ(view.payload_source, codec::PayloadSource::kSequence);
  EXPECT_EQ(view.statements.size(), 3u);
  expect_rebuilds_identically(bytes);
}

TEST(Fixtures, NodeInsertAndUpdate) {
  auto insert = fixture("node_insert_many_op_msg.hex");
  const OpMsg msg = OpMsg::parse(insert);
  const auto view = codec::describe(msg);
  EXPECT_EQ(view.kind, codec::CommandKind::kInsert);
  EXPECT_EQ(view.statements.size(), 2u);
  expect_rebuilds_identically(insert);
  auto update = fixture("node_update_push_op_msg.hex");
  const auto uview = codec::describe(OpMsg::parse(update));
  EXPECT_EQ(uview.kind, codec::CommandKind::kUpdate);
  EXPECT_EQ(uview.statements.size(), 1u);
}

TEST(Fixtures, NodeLegacyHelloIsAnOpQueryOnAdminCmd) {
  auto bytes = fixture("node_hello_op_query.hex");
  const auto q = OpQuery::parse(bytes);
  EXPECT_EQ(q.full_collection_name, "admin.$cmd");
  bson_t b = q.query.borrow();
  bson_iter_t it;
  ASSERT_TRUE(bson_iter_init(&it, &b) && bson_iter_next(&it));
  EXPECT_STREQ(bson_iter_key(&it), "ismaster");
}

TEST(Fixtures, PipelineAndFindAndModify) {
  auto agg =
      decompress_message(fixture("pymongo_aggregate_lookup_zstd.hex"), kDefaultMaxMessageBytes);
  const auto aview = codec::describe(OpMsg::parse(agg));
  EXPECT_EQ(aview.kind, codec::CommandKind::kAggregate);
  EXPECT_FALSE(aview.pipeline.empty());
  auto fam =
      decompress_message(fixture("pymongo_find_one_and_replace_zstd.hex"), kDefaultMaxMessageBytes);
  const auto fview = codec::describe(OpMsg::parse(fam));
  EXPECT_EQ(fview.kind, codec::CommandKind::kFindAndModify);
  EXPECT_FALSE(fview.update.empty());
  EXPECT_FALSE(fview.update_is_pipeline);
}

}  // namespace
}  // namespace docguard::codec
