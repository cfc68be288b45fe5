#include "docguard/base/inline_vector.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace docguard::base {
namespace {

std::vector<std::string> contents(const InlineVector<std::string, 2>& v) {
  return {v.begin(), v.end()};
}

TEST(InlineVector, PushBackKeepsOrderInlineAndPastItsRoom) {
  InlineVector<std::string, 2> v;
  EXPECT_TRUE(v.empty());
  v.push_back("a");
  v.push_back("b");
  EXPECT_EQ(contents(v), (std::vector<std::string>{"a", "b"}));
  v.push_back("c");  // spills: the inline two move along, in order
  v.emplace_back() = "d";
  EXPECT_EQ(contents(v), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(v.front(), "a");
  EXPECT_EQ(v.back(), "d");
  v.clear();
  EXPECT_TRUE(v.empty());
  v.push_back("e");
  EXPECT_EQ(contents(v), (std::vector<std::string>{"e"}));
}

}  // namespace
}  // namespace docguard::base
