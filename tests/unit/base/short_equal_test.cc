#include "docguard/base/short_equal.h"

#include <gtest/gtest.h>

#include <string>

namespace docguard::base {
namespace {

// Every length from 0 to 40, and a difference at every position: the eight-byte steps, the
// overlapping four-byte pair and the single bytes each see one.
TEST(ShortEqualTest, FindsADifferenceAtEveryPositionOfEveryLength) {
  for (size_t n = 0; n <= 40; ++n) {
    std::string a(n, 'x');
    for (size_t i = 0; i < n; ++i) a[i] = static_cast<char>('a' + i % 26);
    const std::string b = a;
    EXPECT_TRUE(same_bytes(a.data(), b.data(), n)) << n;
    EXPECT_TRUE(same_text(a, b)) << n;
    for (size_t at = 0; at < n; ++at) {
      std::string c = a;
      c[at] = '#';
      EXPECT_FALSE(same_bytes(a.data(), c.data(), n)) << n << " at " << at;
      EXPECT_FALSE(same_text(a, c)) << n << " at " << at;
    }
  }
}

TEST(ShortEqualTest, TextsOfOtherLengthsDiffer) {
  EXPECT_FALSE(same_text("items", "item"));
  EXPECT_FALSE(same_text("", "a"));
  EXPECT_TRUE(same_text("", ""));
  EXPECT_TRUE(same_text(std::string_view("ab\0c", 4), std::string_view("ab\0c", 4)));
  EXPECT_FALSE(same_text(std::string_view("ab\0c", 4), std::string_view("ab\0d", 4)));
}

}  // namespace
}  // namespace docguard::base
