// The one hash: seeded continuation, every length's tail bytes counted, no lost bits for short
// keys of the lengths the tables see.
#include "docguard/base/hash.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <unordered_map>

namespace docguard::base {
namespace {

TEST(Hash, EveryByteAndTheLengthCount) {
  std::set<uint64_t> seen;
  std::string key;
  for (int length = 0; length <= 24; ++length) {
    EXPECT_TRUE(seen.insert(hash_bytes(key)).second) << "length " << length;
    for (int i = 0; i < length; ++i) {
      std::string changed = key;
      changed[i] = static_cast<char>(changed[i] ^ 1);
      EXPECT_NE(hash_bytes(changed), hash_bytes(key)) << length << ":" << i;
    }
    key.push_back('a');
  }
  // A trailing zero byte is not the same key as the shorter one.
  EXPECT_NE(hash_bytes(std::string("ab\0", 3)), hash_bytes("ab"));
}

// The hash as defined: eight bytes a step, then the last 1 to 7 as one little-endian word (byte
// i at bits 8i), one byte at a time. The word is read with wider loads; the values must not move
// (tables and tests may hold them between versions).
uint64_t hash_by_definition(std::string_view s, uint64_t seed) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ULL;
  uint64_t h = ((s.size() + 1) * kMul) ^ seed;
  size_t at = 0;
  auto step = [&](uint64_t w) {
    h = (h ^ w) * kMul;
    h ^= h >> 29;
  };
  for (; s.size() - at >= 8; at += 8) {
    uint64_t w = 0;
    for (size_t i = 0; i < 8; ++i) w |= uint64_t{static_cast<uint8_t>(s[at + i])} << (8 * i);
    step(w);
  }
  if (at < s.size()) {
    uint64_t w = 0;
    for (size_t i = 0; at + i < s.size(); ++i) {
      w |= uint64_t{static_cast<uint8_t>(s[at + i])} << (8 * i);
    }
    step(w);
  }
  return h ^ (h >> 32);
}

TEST(Hash, EveryLengthHashesAsDefinedByteByByte) {
  std::string key;
  for (int length = 0; length <= 40; ++length) {
    for (const uint64_t seed : {uint64_t{0}, uint64_t{7}, ~uint64_t{0}}) {
      EXPECT_EQ(hash_bytes(key, seed), hash_by_definition(key, seed)) << "length " << length;
      // Within a longer buffer, as keys are: the bytes after the key never count.
      const std::string padded = key + "\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8";
      EXPECT_EQ(hash_bytes(std::string_view(padded).substr(0, key.size()), seed),
                hash_by_definition(key, seed));
    }
    key.push_back(static_cast<char>(0x80 + length * 37));
  }
}

TEST(Hash, TheSeedChangesTheHashAndTheBytesViewIsTheSame) {
  EXPECT_EQ(hash_bytes("shop.orders"), hash_bytes("shop.orders", 0));
  EXPECT_NE(hash_bytes("orders", 1), hash_bytes("orders", 2));
  const uint8_t bytes[] = {1, 2, 3};
  EXPECT_EQ(hash_bytes(bytes, 3, 7), hash_bytes(std::string_view("\x01\x02\x03", 3), 7));
}

// What the tables use: the top bits (the document tracker's shards and slots) and the value
// modulo a prime (std::unordered_map's buckets). The low bits alone are not mixed for keys that
// differ only in their last word, and no table of docguard's uses them alone.
TEST(Hash, ManyShortKeysSpreadOverBuckets) {
  std::set<uint64_t> top_bits, prime_buckets;
  for (int i = 0; i < 4096; ++i) {
    const uint64_t h = hash_bytes("db.c" + std::to_string(i));
    top_bits.insert(h >> 52);
    prime_buckets.insert(h % 4099);
  }
  // A uniform hash fills about 63% of 4096 buckets with 4096 keys.
  EXPECT_GT(top_bits.size(), 2400u);
  EXPECT_GT(prime_buckets.size(), 2400u);
}

TEST(Hash, StringHashFindsByView) {
  std::unordered_map<std::string, int, StringHash, std::equal_to<>> map{{"a.b", 1}};
  EXPECT_EQ(map.find(std::string_view("a.b"))->second, 1);
}

}  // namespace
}  // namespace docguard::base
