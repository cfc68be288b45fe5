#include "docguard/codec/enum_names.h"

#include <gtest/gtest.h>

#include "docguard/codec/message.h"
#include "docguard/codec/op_compressed.h"

namespace docguard::codec {
namespace {

enum class Color { kRed, kGreen, kBlue, kUnlisted };
constexpr auto kColors = enum_names<Color>(
    {{Color::kRed, "red"}, {Color::kGreen, "green"}, {Color::kBlue, "blue"}}, "?");

TEST(EnumNames, ReadsBothWays) {
  static_assert(kColors.value("green") == Color::kGreen);
  EXPECT_STREQ(kColors.name(Color::kBlue), "blue");
  EXPECT_STREQ(kColors.name(Color::kUnlisted), "?");
  EXPECT_FALSE(kColors.value("Green").has_value());  // names are exact
  for (const auto& e : kColors.entries()) EXPECT_EQ(kColors.value(e.name), e.value);
}

TEST(EnumNames, ListsTheChoicesForErrors) {
  EXPECT_EQ(kColors.choices(), "red, green or blue");
  constexpr auto two = enum_names<Color>({{Color::kRed, "red"}, {Color::kBlue, "blue"}}, "?");
  EXPECT_EQ(two.choices(), "red or blue");
}

TEST(EnumNames, CodecTables) {
  EXPECT_STREQ(op_code_name(OpCode::kMsg), "OP_MSG");
  EXPECT_STREQ(op_code_name(OpCode::kCompressed), "OP_COMPRESSED");
  EXPECT_STREQ(op_code_name(static_cast<OpCode>(42)), "unknown");
  EXPECT_STREQ(compressor_name(static_cast<Compressor>(9)), "unknown");
}

}  // namespace
}  // namespace docguard::codec
