// docguard's one non-cryptographic hash: of a short key (a namespace, label values, _id bytes, a
// field name), eight bytes per multiply, where std::hash (MurmurHash2) costs about three times
// as many instructions on the per-message lookups. Seeded, so a hash can be continued over the
// parts of a path. Not collision-resistant: for hash tables and first sort keys only, never a
// decision trusted alone.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace docguard::base {

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
    uint64_t w = 0;
    for (size_t i = 0; i < n; ++i) {
      w |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
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
