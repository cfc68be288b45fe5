#include "docguard/base/json_string.h"

#include <gtest/gtest.h>

#include <string>

namespace docguard::json {
namespace {

TEST(JsonString, QuotedAndEscaped) {
  EXPECT_EQ(quoted("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(quoted(""), R"("")");
  EXPECT_EQ(quoted("line\nbreak\x01"), R"("line\nbreak\u0001")");
}

}  // namespace
}  // namespace docguard::json
