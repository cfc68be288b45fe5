// docguard's one non-cryptographic hash: of a short key (a namespace, label values, _id bytes, a
// field name), eight bytes per multiply, where std::hash (MurmurHash2) costs about three times
// as many instructions on the per-message lookups. Seeded, so a hash can be continued over the
// parts of a path. Not collision-resistant: for hash tables and first sort keys only, never a
// decision trusted alone.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace docguard::base {

// Four bytes as loaded from memory, read as a little-endian number.
inline uint32_t le32_value(uint32_t loaded) {
  if constexpr (std::endian::native == std::endian::big) return __builtin_bswap32(loaded);
  return loaded;
}

inline uint64_t hash_bytes(std::string_view s, uint64_t seed = 0) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ULL;
  uint64_t h = ((s.size() + 1) * kMul) ^ seed;
  const char* p = s.data();
  size_t n = s.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
  }
  if (n > 0) {
    // The last 1 to 7 bytes as one little-endian word, byte i at bits 8i: two loads that may
    // overlap (a byte read twice lands on its own bits both times), not one step per byte.
    uint64_t w = 0;
    if (n >= 4) {
      uint32_t low = 0, high = 0;
      std::memcpy(&low, p, 4);
      std::memcpy(&high, p + n - 4, 4);
      w = uint64_t{le32_value(low)} | uint64_t{le32_value(high)} << (8 * (n - 4));
    } else {
      const auto byte = [p](size_t i) { return static_cast<uint64_t>(static_cast<uint8_t>(p[i])); };
      w = byte(0) | byte(n / 2) << (8 * (n / 2)) | byte(n - 1) << (8 * (n - 1));
    }
    h = (h ^ w) * kMul;
    h ^= h >> 29;
  }
  return h ^ (h >> 32);
}

inline uint64_t hash_bytes(const uint8_t* data, size_t size, uint64_t seed = 0) {
  return hash_bytes(std::string_view(reinterpret_cast<const char*>(data), size), seed);
}

// Lets unordered maps keyed by std::string be searched with a std::string_view (no copy).
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return hash_bytes(s); }
};

}  // namespace docguard::base
