// The admin token's comparison: equal only when equal, whatever the lengths.
#include "docguard/base/constant_time.h"

#include <gtest/gtest.h>

namespace docguard::base {
namespace {

TEST(ConstantTime, EqualOnlyWhenEqual) {
  EXPECT_TRUE(equal_in_constant_time("Bearer s3cret", "Bearer s3cret"));
  EXPECT_TRUE(equal_in_constant_time("", ""));
  EXPECT_FALSE(equal_in_constant_time("Bearer s3creT", "Bearer s3cret"));
  EXPECT_FALSE(equal_in_constant_time("Bearer s3cre", "Bearer s3cret"));
  EXPECT_FALSE(equal_in_constant_time("Bearer s3cretX", "Bearer s3cret"));
  EXPECT_FALSE(equal_in_constant_time("", "Bearer s3cret"));
  EXPECT_FALSE(equal_in_constant_time("Bearer s3cret", ""));
  // A repetition of the secret is not the secret.
  EXPECT_FALSE(equal_in_constant_time("abcabc", "abc"));
}

}  // namespace
}  // namespace docguard::base
