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

// Elements are constructed when appended and destroyed when cleared, spilled or gone: the
// inline slots of an empty vector hold nothing (counted by a type that tracks its lives).
struct Tracked {
  static inline int alive = 0;
  std::string text;
  Tracked() { ++alive; }
  Tracked(const char* t) : text(t) { ++alive; }  // NOLINT: implicit, for push_back("x")
  Tracked(const Tracked& o) : text(o.text) { ++alive; }
  Tracked(Tracked&& o) noexcept : text(std::move(o.text)) { ++alive; }
  Tracked& operator=(const Tracked&) = default;
  Tracked& operator=(Tracked&&) noexcept = default;
  ~Tracked() { --alive; }
};

std::vector<std::string> texts(const InlineVector<Tracked, 2>& v) {
  std::vector<std::string> out;
  for (const Tracked& t : v) out.push_back(t.text);
  return out;
}

TEST(InlineVector, ElementsLiveOnlyWhileHeld) {
  {
    InlineVector<Tracked, 2> v;
    EXPECT_EQ(Tracked::alive, 0);
    v.push_back("a");
    EXPECT_EQ(Tracked::alive, 1);
    v.emplace_back().text = "b";
    EXPECT_EQ(Tracked::alive, 2);
    v.push_back(v.front());  // an inline element appended as the vector spills
    EXPECT_EQ(texts(v), (std::vector<std::string>{"a", "b", "a"}));
    EXPECT_EQ(Tracked::alive, 3);
    v.clear();
    EXPECT_EQ(Tracked::alive, 0);
    v.push_back("c");
    EXPECT_EQ(Tracked::alive, 1);
  }
  EXPECT_EQ(Tracked::alive, 0);
}

TEST(InlineVector, CopiesAndMovesInlineAndSpilled) {
  for (const size_t n : {size_t{1}, size_t{2}, size_t{5}}) {
    InlineVector<Tracked, 2> v;
    std::vector<std::string> want;
    for (size_t i = 0; i < n; ++i) {
      want.push_back(std::to_string(i));
      v.emplace_back().text = want.back();
    }
    InlineVector<Tracked, 2> copy(v);
    EXPECT_EQ(texts(copy), want);
    InlineVector<Tracked, 2> assigned;
    assigned.push_back("old");
    assigned = v;
    EXPECT_EQ(texts(assigned), want);
    assigned = assigned;  // NOLINT: self-assignment keeps the elements
    EXPECT_EQ(texts(assigned), want);
    InlineVector<Tracked, 2> moved(std::move(copy));
    EXPECT_EQ(texts(moved), want);
    InlineVector<Tracked, 2> move_assigned;
    move_assigned.push_back("old");
    move_assigned = std::move(moved);
    EXPECT_EQ(texts(move_assigned), want);
    EXPECT_EQ(texts(v), want);
  }
  EXPECT_EQ(Tracked::alive, 0);
}

}  // namespace
}  // namespace docguard::base
