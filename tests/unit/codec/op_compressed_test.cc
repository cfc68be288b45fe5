#include "docguard/codec/op_compressed.h"

#include <gtest/gtest.h>

#include "compress_message.h"
#include "test_messages.h"

namespace docguard::codec {
namespace {

class CompressedRoundTrip : public ::testing::TestWithParam<Compressor> {};

TEST_P(CompressedRoundTrip, DecompressesToTheOriginalMessage) {
  auto original = testing::op_msg(
      R"({"insert": "c", "$db": "t", "documents": [{"x": "aaaaaaaaaaaaaaaaaaaaaaaaaaaa"}]})", 9);
  auto compressed = testing::compress_message(original, GetParam());
  const auto c = OpCompressed::parse(compressed);
  EXPECT_EQ(c.original_op_code, OpCode::kMsg);
  EXPECT_EQ(c.header.request_id, 9);
  EXPECT_EQ(decompress_message(compressed, kDefaultMaxMessageBytes), original);
}

INSTANTIATE_TEST_SUITE_P(All, CompressedRoundTrip,
                         ::testing::Values(Compressor::kNoop, Compressor::kSnappy,
                                           Compressor::kZlib, Compressor::kZstd));

std::string error_kind(const std::vector<uint8_t>& m, uint32_t limit) {
  try {
    decompress_message(m, limit);
  } catch (const ProtocolError& e) {
    return name(e.kind());
  }
  return "ok";
}

TEST(OpCompressed, RejectsDeclaredSizeOverLimitBeforeAllocating) {
  auto original = testing::op_msg(R"({"ping": 1})");
  auto compressed = testing::compress_message(original, Compressor::kZstd);
  store_le32(compressed.data() + kHeaderSize + 4, 2'000'000'000);
  EXPECT_EQ(error_kind(compressed, kDefaultMaxMessageBytes), "decompression_limit");
}

TEST(OpCompressed, RejectsBombThatLiesAboutItsSize) {
  // 10 MB of zeros compresses to a few KB; declare only 100 bytes.
  std::vector<uint8_t> big(kHeaderSize + 10'000'000, 0);
  write_header(big.data(), MsgHeader{static_cast<int32_t>(big.size()), 1, 0, OpCode::kMsg});
  for (auto c : {Compressor::kSnappy, Compressor::kZlib, Compressor::kZstd}) {
    auto compressed = testing::compress_message(big, c);
    store_le32(compressed.data() + kHeaderSize + 4, 100);
    EXPECT_EQ(error_kind(compressed, kDefaultMaxMessageBytes), "decompression_size")
        << compressor_name(c);
  }
}

TEST(OpCompressed, RejectsCorruptPayloadAndUnknownCompressor) {
  auto original =
      testing::op_msg(R"({"ping": 1, "pad": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"})");
  auto compressed = testing::compress_message(original, Compressor::kZlib);
  compressed[compressed.size() - 3] ^= 0xff;
  compressed[compressed.size() - 8] ^= 0xff;
  EXPECT_NE(error_kind(compressed, kDefaultMaxMessageBytes), "ok");
  auto unknown = testing::compress_message(original, Compressor::kNoop);
  unknown[kHeaderSize + 8] = 9;
  EXPECT_EQ(error_kind(unknown, kDefaultMaxMessageBytes), "bad_op_compressed");
}

TEST(OpCompressed, CompressorNames) {
  EXPECT_EQ(compressor_from_name("zstd"), Compressor::kZstd);
  EXPECT_FALSE(compressor_from_name("lz4").has_value());
}

}  // namespace
}  // namespace docguard::codec
