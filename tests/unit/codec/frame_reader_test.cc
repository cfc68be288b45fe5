#include "docguard/codec/frame_reader.h"

#include <gtest/gtest.h>

#include "test_messages.h"

namespace docguard::codec {
namespace {

TEST(FrameReader, AssemblesMessagesArrivingOneByteAtATime) {
  auto a = testing::op_msg(R"({"ping": 1, "$db": "admin"})", 7);
  auto b = testing::op_msg(R"({"find": "c", "$db": "test"})", 8);
  std::vector<uint8_t> stream = a;
  stream.insert(stream.end(), b.begin(), b.end());
  FrameReader reader;
  std::vector<std::vector<uint8_t>> out;
  for (uint8_t byte : stream) {
    reader.feed(Bytes{&byte, 1});
    while (auto m = reader.next()) out.push_back(std::move(*m));
  }
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], a);
  EXPECT_EQ(out[1], b);
  EXPECT_EQ(reader.buffered(), 0u);
}

TEST(FrameReader, RejectsLengthBelowHeader) {
  uint8_t header[16] = {};
  store_le32(header, 8);
  FrameReader reader;
  try {
    reader.feed(Bytes{header, 16});
    FAIL() << "expected ProtocolError";
  } catch (const ProtocolError& e) {
    EXPECT_EQ(e.kind(), "bad_length");
  }
}

TEST(FrameReader, RejectsLengthOverLimitBeforeBuffering) {
  uint8_t header[16] = {};
  store_le32(header, 100'000'000);
  FrameReader reader(48'000'000);
  try {
    reader.feed(Bytes{header, 16});
    FAIL() << "expected ProtocolError";
  } catch (const ProtocolError& e) {
    EXPECT_EQ(e.kind(), "too_large");
  }
}

TEST(FrameReader, ConfigurableLimit) {
  auto m = testing::op_msg(R"({"ping": 1, "$db": "admin"})");
  FrameReader reader(static_cast<uint32_t>(m.size() - 1));
  EXPECT_THROW(reader.feed(m), ProtocolError);
}

}  // namespace
}  // namespace docguard::codec
