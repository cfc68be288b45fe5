#include "docguard/base/enum_names.h"

#include <gtest/gtest.h>

namespace docguard::base {
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

}  // namespace
}  // namespace docguard::base
