// Keys built from several texts (a series' label values, a namespace's database and
// collection). The texts come from clients and may hold any byte, so a part is written as its
// length's four bytes, then its bytes: two lists of parts whose bytes join to the same text
// ("a" and "bc", "ab" and "c"; "a.b" and "c", "a" and "b.c") never make the same key, as they
// would around a separator byte.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "docguard/base/short_equal.h"

namespace docguard::base {

inline void append_key_part(std::string& key, std::string_view part) {
  const auto size = static_cast<uint32_t>(part.size());
  key.append(reinterpret_cast<const char*>(&size), sizeof size);
  key.append(part);
}

// The same part written in place, for a key sized once: the bytes it takes, and the writing,
// which returns where the part ends.
inline size_t key_part_size(std::string_view part) { return sizeof(uint32_t) + part.size(); }
inline char* write_key_part(char* out, std::string_view part) {
  const auto size = static_cast<uint32_t>(part.size());
  std::memcpy(out, &size, sizeof size);
  if (!part.empty()) std::memcpy(out + sizeof size, part.data(), part.size());
  return out + sizeof size + part.size();
}

// Where the part after `at` ends when it is `part`, null when it is not (or [at, end) is too
// short to hold it). Compares in place: no key is built.
[[gnu::always_inline]] inline const char* match_key_part(const char* at, const char* end,
                                                         std::string_view part) {
  uint32_t size = 0;
  if (static_cast<size_t>(end - at) < sizeof size + part.size()) return nullptr;
  std::memcpy(&size, at, sizeof size);
  if (size != part.size() || !same_bytes(at + sizeof size, part.data(), part.size())) {
    return nullptr;
  }
  return at + sizeof size + part.size();
}

// The part after `at`, into `part`, and where it ends; null when [at, end) cannot hold one.
inline const char* read_key_part(const char* at, const char* end, std::string_view* part) {
  uint32_t size = 0;
  if (static_cast<size_t>(end - at) < sizeof size) return nullptr;
  std::memcpy(&size, at, sizeof size);
  if (static_cast<size_t>(end - at) - sizeof size < size) return nullptr;
  *part = std::string_view(at + sizeof size, size);
  return at + sizeof size + size;
}

}  // namespace docguard::base
