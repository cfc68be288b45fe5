// A comparison whose time tells nothing of where the texts differ (constant_time.h).
#include "docguard/base/constant_time.h"

#include <cstddef>

namespace docguard::base {

bool equal_in_constant_time(std::string_view given, std::string_view secret) {
  // Every byte of `given` is compared (with the secret's byte at the same place, cycling when
  // the secret is shorter), and the difference is gathered without a branch on it; the length
  // check comes last, so a wrong length costs the same walk as a wrong byte.
  unsigned char difference = 0;
  const size_t n = given.size();
  const size_t m = secret.size();
  for (size_t i = 0; i < n; ++i) {
    const unsigned char s = m == 0 ? 0 : static_cast<unsigned char>(secret[i % m]);
    difference |= static_cast<unsigned char>(static_cast<unsigned char>(given[i]) ^ s);
  }
  // Read through a volatile, so the compiler cannot stop the loop at the first difference.
  const volatile unsigned char settled = difference;
  return settled == 0 && n == m;
}

}  // namespace docguard::base
