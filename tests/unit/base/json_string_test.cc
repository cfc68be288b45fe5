#include "docguard/base/json_string.h"

#include <gtest/gtest.h>

#include <string>

namespace docguard::json {
namespace {

TEST(JsonString, StringMembersAreCommaSeparatedAndEscaped) {
  std::string out = "{";
  append_string_members(out, {{"db", "shop"}, {"rule", "a\"b"}});
  out += "}";
  EXPECT_EQ(out, R"({"db":"shop","rule":"a\"b"})");
}

TEST(JsonString, OneMemberHasNoComma) {
  std::string out;
  append_string_members(out, {{"shape", ""}});
  EXPECT_EQ(out, R"("shape":"")");
}

}  // namespace
}  // namespace docguard::json
