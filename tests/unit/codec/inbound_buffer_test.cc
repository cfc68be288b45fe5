#include "docguard/codec/inbound_buffer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "test_messages.h"

namespace docguard::codec {
namespace {

// Feeds `stream` in reads of at most `chunk` bytes (as a socket would deliver it) and collects
// the messages taken out.
std::vector<std::vector<uint8_t>> feed(InboundBuffer& in, const std::vector<uint8_t>& stream,
                                       size_t chunk) {
  std::vector<std::vector<uint8_t>> out;
  size_t pos = 0;
  while (true) {
    while (true) {
      Bytes m = in.next_message();
      if (m.empty()) break;
      out.emplace_back(m.begin(), m.end());
    }
    if (pos == stream.size()) break;
    auto space = in.writable();
    EXPECT_FALSE(space.empty());
    const size_t n = std::min({chunk, space.size(), stream.size() - pos});
    std::memcpy(space.data(), stream.data() + pos, n);
    in.commit(n);
    pos += n;
  }
  return out;
}

TEST(InboundBuffer, TakesMessagesOutWhateverTheReadSizes) {
  auto a = testing::op_msg(R"({"ping": 1, "$db": "admin"})", 1);
  auto big_body = std::string(R"({"insert": "c", "$db": "t", "documents": [{"x": ")") +
                  std::string(20000, 'y') + R"("}]})";
  auto b = testing::op_msg(big_body.c_str(), 2);
  auto c = testing::op_msg(R"({"find": "c", "$db": "t"})", 3);
  std::vector<uint8_t> stream = a;
  stream.insert(stream.end(), b.begin(), b.end());
  stream.insert(stream.end(), c.begin(), c.end());
  for (size_t chunk : {1u, 7u, 16u, 100u, 1536u, 65536u}) {
    InboundBuffer in(kDefaultMaxMessageBytes);
    auto out = feed(in, stream, chunk);
    ASSERT_EQ(out.size(), 3u) << chunk;
    EXPECT_EQ(out[0], a);
    EXPECT_EQ(out[1], b);
    EXPECT_EQ(out[2], c);
    EXPECT_EQ(in.pending(), 0u);
    in.shrink();
    EXPECT_EQ(in.capacity(), InboundBuffer::kIdleCapacity);
  }
}

TEST(InboundBuffer, LargeMessageGetsOneBufferOfItsSize) {
  auto body = std::string(R"({"x": ")") + std::string(1 << 20, 'z') + R"("})";
  auto m = testing::op_msg(body.c_str());
  InboundBuffer in(kDefaultMaxMessageBytes);
  auto first = in.writable();
  std::memcpy(first.data(), m.data(), first.size());
  in.commit(first.size());
  auto rest = in.writable();  // header known: room for the whole message in one read
  EXPECT_GE(rest.size(), m.size() - first.size());
  std::memcpy(rest.data(), m.data() + first.size(), m.size() - first.size());
  in.commit(m.size() - first.size());
  Bytes got = in.next_message();
  ASSERT_EQ(got.size(), m.size());
  EXPECT_EQ(std::memcmp(got.data(), m.data(), m.size()), 0);
}

TEST(InboundBuffer, LargeBlocksAreReusedThroughTheThreadSpare) {
  InboundBuffer::release_spare_if_unused(std::chrono::seconds(0));
  auto body = std::string(R"({"x": ")") + std::string(200000, 'z') + R"("})";
  auto m = testing::op_msg(body.c_str());
  InboundBuffer in(kDefaultMaxMessageBytes);
  for (int round = 0; round < 3; ++round) {
    auto out = feed(in, m, 65536);
    ASSERT_EQ(out.size(), 1u);
    in.shrink();
    EXPECT_EQ(in.capacity(), InboundBuffer::kIdleCapacity);
    EXPECT_GE(InboundBuffer::spare_capacity(), m.size());
  }
  InboundBuffer::release_spare_if_unused(std::chrono::seconds(0));
  EXPECT_EQ(InboundBuffer::spare_capacity(), 0u);
}

TEST(InboundBuffer, ReleaseLeavesNoBlockAndTheNextBufferReusesIt) {
  auto m = testing::op_msg(R"({"ping": 1, "$db": "admin"})", 1);
  InboundBuffer a(kDefaultMaxMessageBytes);
  InboundBuffer b(kDefaultMaxMessageBytes);
  ASSERT_EQ(feed(a, m, m.size()).size(), 1u);
  const size_t pooled = InboundBuffer::pooled_blocks();
  a.release();
  EXPECT_EQ(a.capacity(), 0u);  // idle: no receive memory at all
  EXPECT_EQ(InboundBuffer::pooled_blocks(), pooled + 1);
  b.writable();  // another connection of the thread receives: it takes the pooled block
  EXPECT_EQ(b.capacity(), InboundBuffer::kIdleCapacity);
  EXPECT_EQ(InboundBuffer::pooled_blocks(), pooled);
  // A released buffer works as before.
  EXPECT_EQ(feed(a, m, 7).size(), 1u);
}

TEST(InboundBuffer, SaysWhetherTheLastReadFilledTheRoomOffered) {
  auto m = testing::op_msg(R"({"ping": 1, "$db": "admin"})", 1);
  InboundBuffer in(kDefaultMaxMessageBytes);
  auto space = in.writable();
  std::memcpy(space.data(), m.data(), 16);
  in.commit(16);
  EXPECT_FALSE(in.last_read_filled());  // less than offered: the socket had no more
  space = in.writable();
  in.commit(space.size());             // as if the socket had the rest and the next messages
  EXPECT_TRUE(in.last_read_filled());  // all of it: there may be more to read at once
}

TEST(InboundBuffer, ReleaseKeepsAPartialMessage) {
  auto m = testing::op_msg(R"({"ping": 1, "$db": "admin"})", 1);
  InboundBuffer in(kDefaultMaxMessageBytes);
  auto space = in.writable();
  std::memcpy(space.data(), m.data(), 20);
  in.commit(20);
  in.release();  // something is pending: nothing is given back
  EXPECT_EQ(in.pending(), 20u);
  EXPECT_EQ(in.capacity(), InboundBuffer::kIdleCapacity);
  space = in.writable();
  std::memcpy(space.data(), m.data() + 20, m.size() - 20);
  in.commit(m.size() - 20);
  Bytes got = in.next_message();
  ASSERT_EQ(got.size(), m.size());
  EXPECT_EQ(std::memcmp(got.data(), m.data(), m.size()), 0);
}

TEST(InboundBuffer, ReleaseAfterALargeMessageKeepsItsBlockAsTheSpare) {
  InboundBuffer::release_spare_if_unused(std::chrono::seconds(0));
  auto body = std::string(R"({"x": ")") + std::string(200000, 'z') + R"("})";
  auto m = testing::op_msg(body.c_str());
  InboundBuffer in(kDefaultMaxMessageBytes);
  ASSERT_EQ(feed(in, m, 65536).size(), 1u);
  in.release();
  EXPECT_EQ(in.capacity(), 0u);
  EXPECT_GE(InboundBuffer::spare_capacity(), m.size());
  ASSERT_EQ(feed(in, m, 65536).size(), 1u);  // the next large message takes the spare back
  EXPECT_EQ(InboundBuffer::spare_capacity(), 0u);
  in.release();
  InboundBuffer::release_spare_if_unused(std::chrono::seconds(0));
}

// Writes a bare header declaring `declared` bytes into the buffer.
void put_header(InboundBuffer& in, int32_t declared) {
  auto space = in.writable();
  uint8_t header[16] = {};
  store_le32(header, declared);
  std::memcpy(space.data(), header, 16);
  in.commit(16);
}

std::string error_kind(InboundBuffer& in) {
  try {
    in.next_message();
  } catch (const ProtocolError& e) {
    return std::string(name(e.kind()));
  }
  return "no error";
}

TEST(InboundBuffer, RejectsBadDeclaredLengthsBeforeBuffering) {
  for (int32_t declared : {8, 100'000'000}) {
    InboundBuffer in(48'000'000);
    put_header(in, declared);
    EXPECT_THROW(in.next_message(), ProtocolError);
    EXPECT_THROW(in.writable(), ProtocolError);
    EXPECT_LE(in.capacity(), InboundBuffer::kIdleCapacity);
  }
}

TEST(InboundBuffer, NamesTheLengthErrors) {
  InboundBuffer below(48'000'000);
  put_header(below, 8);
  EXPECT_EQ(error_kind(below), "bad_length");
  InboundBuffer negative(48'000'000);
  put_header(negative, -1);
  EXPECT_EQ(error_kind(negative), "bad_length");
  InboundBuffer over(48'000'000);
  put_header(over, 100'000'000);
  EXPECT_EQ(error_kind(over), "too_large");
}

TEST(InboundBuffer, WaitsForTheRestOfAPartialFrame) {
  auto m = testing::op_msg(R"({"ping": 1, "$db": "admin"})");
  for (size_t have : {size_t{0}, size_t{5}, kHeaderSize, m.size() - 1}) {
    InboundBuffer partial(kDefaultMaxMessageBytes);
    auto space = partial.writable();
    std::memcpy(space.data(), m.data(), have);
    partial.commit(have);
    EXPECT_TRUE(partial.next_message().empty()) << have;
    EXPECT_EQ(partial.pending(), have);
  }
}

TEST(InboundBuffer, ConfigurableLimit) {
  auto m = testing::op_msg(R"({"ping": 1, "$db": "admin"})");
  InboundBuffer at_limit(static_cast<uint32_t>(m.size()));
  EXPECT_EQ(feed(at_limit, m, m.size()).size(), 1u);
  InboundBuffer below_limit(static_cast<uint32_t>(m.size() - 1));
  EXPECT_THROW(feed(below_limit, m, m.size()), ProtocolError);
}

}  // namespace
}  // namespace docguard::codec
