#include "docguard/base/key_parts.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <set>
#include <string>
#include <string_view>

namespace docguard::base {
namespace {

std::string key_of(std::initializer_list<std::string_view> parts) {
  std::string key;
  for (const std::string_view p : parts) append_key_part(key, p);
  return key;
}

// Parts whose bytes join to the same text, with a '.' or a 0x1f (a former separator) between
// them, or an empty part: each list its own key.
TEST(KeyPartsTest, PartsThatJoinToOneTextMakeDifferentKeys) {
  const std::string sep(1, '\x1f');
  const std::set<std::string> keys = {
      key_of({"a", "bc"}),
      key_of({"ab", "c"}),
      key_of({"abc"}),
      key_of({"a.b", "c"}),
      key_of({"a", "b.c"}),
      key_of({"a" + sep + "b", "c"}),
      key_of({"a", "b" + sep + "c"}),
      key_of({"", "abc"}),
      key_of({"abc", ""}),
      key_of({"a", "b", "c"}),
  };
  EXPECT_EQ(keys.size(), 10u);
}

// match_key_part reads back exactly what append_key_part wrote, part by part, and nothing else:
// another part, a part cut short, or a key too short to hold it.
TEST(KeyPartsTest, MatchReadsBackEachPartInTurn) {
  const std::string key = key_of({"shop", "", "items"});
  const char* const end = key.data() + key.size();
  const char* at = match_key_part(key.data(), end, "shop");
  ASSERT_NE(at, nullptr);
  at = match_key_part(at, end, "");
  ASSERT_NE(at, nullptr);
  EXPECT_EQ(match_key_part(at, end, "item"), nullptr);
  EXPECT_EQ(match_key_part(at, end, "items!"), nullptr);
  EXPECT_EQ(match_key_part(at, end, "itemz"), nullptr);
  EXPECT_EQ(match_key_part(at, end, "items"), end);
  EXPECT_EQ(match_key_part(key.data(), key.data() + 3, ""), nullptr);  // not even a length
  EXPECT_EQ(match_key_part(key.data(), end, "sho"), nullptr);
}

// A part written in place is the part appended.
TEST(KeyPartsTest, WrittenInPlaceIsAppended) {
  std::string appended, written;
  append_key_part(appended, "shop");
  append_key_part(appended, "");
  written.resize(key_part_size("shop") + key_part_size(""));
  char* end = write_key_part(written.data(), "shop");
  end = write_key_part(end, "");
  EXPECT_EQ(end, written.data() + written.size());
  EXPECT_EQ(written, appended);
}

// read_key_part gives back each part append_key_part wrote, and refuses a key cut short.
TEST(KeyPartsTest, ReadGivesBackEachPartInTurn) {
  const std::string key = key_of({"a.b", "", std::string_view("c\0d", 3)});
  const char* const end = key.data() + key.size();
  std::string_view part;
  const char* at = read_key_part(key.data(), end, &part);
  ASSERT_NE(at, nullptr);
  EXPECT_EQ(part, "a.b");
  at = read_key_part(at, end, &part);
  ASSERT_NE(at, nullptr);
  EXPECT_EQ(part, "");
  at = read_key_part(at, end, &part);
  ASSERT_EQ(at, end);
  EXPECT_EQ(part, std::string_view("c\0d", 3));
  EXPECT_EQ(read_key_part(at, end, &part), nullptr);                     // nothing left
  EXPECT_EQ(read_key_part(key.data(), key.data() + 5, &part), nullptr);  // "a.b" cut short
  EXPECT_EQ(read_key_part(key.data(), key.data() + 3, &part), nullptr);  // not even a length
}

}  // namespace
}  // namespace docguard::base
