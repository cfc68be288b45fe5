// The settings' globs: `*` for any run of characters, `?` for one.
#include "docguard/base/glob.h"

#include <gtest/gtest.h>

namespace docguard::base {
namespace {

TEST(GlobTest, StarsAndQuestionMarks) {
  EXPECT_TRUE(glob_match("shop.products", "shop.products"));
  EXPECT_FALSE(glob_match("shop.products", "shop.products2"));
  EXPECT_TRUE(glob_match("shop.*", "shop.products"));
  EXPECT_TRUE(glob_match("shop.*", "shop.system.views"));
  EXPECT_FALSE(glob_match("shop.*", "shopx.products"));
  EXPECT_TRUE(glob_match("*", "a.b"));
  EXPECT_TRUE(glob_match("*.logs", "app.logs"));
  EXPECT_TRUE(glob_match("shop.prod?cts", "shop.products"));
  EXPECT_FALSE(glob_match("shop.prod?cts", "shop.prodcts"));
}

}  // namespace
}  // namespace docguard::base
