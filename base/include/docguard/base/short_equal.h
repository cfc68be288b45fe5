// Equality of short byte strings (names: a database, a collection, a label value) without a
// call: on the per-message paths, a name is compared with the one met last, and a call to
// memcmp costs more than the comparison of a few bytes itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace docguard::base {

// Whether a[0, n) equals b[0, n): eight bytes at a time, then four (twice, overlapping), then
// one at a time.
[[gnu::always_inline]] inline bool same_bytes(const char* a, const char* b, size_t n) {
  for (; n >= 8; a += 8, b += 8, n -= 8) {
    uint64_t x = 0;
    uint64_t y = 0;
    std::memcpy(&x, a, 8);
    std::memcpy(&y, b, 8);
    if (x != y) return false;
  }
  if (n >= 4) {  // 4 to 7 bytes: the first four and the last four (they may overlap)
    uint32_t x[2] = {0, 0};
    uint32_t y[2] = {0, 0};
    std::memcpy(&x[0], a, 4);
    std::memcpy(&y[0], b, 4);
    std::memcpy(&x[1], a + n - 4, 4);
    std::memcpy(&y[1], b + n - 4, 4);
    return x[0] == y[0] && x[1] == y[1];
  }
  for (; n > 0; ++a, ++b, --n) {
    if (*a != *b) return false;
  }
  return true;
}

[[gnu::always_inline]] inline bool same_text(std::string_view a, std::string_view b) {
  return a.size() == b.size() && same_bytes(a.data(), b.data(), a.size());
}

}  // namespace docguard::base
