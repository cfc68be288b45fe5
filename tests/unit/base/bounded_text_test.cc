#include "docguard/base/bounded_text.h"

#include <gtest/gtest.h>

#include <string>

#include "docguard/base/structured_log.h"

namespace docguard::base {
namespace {

TEST(BoundedText, ShortTextIsKeptWhole) {
  std::string out;
  EXPECT_FALSE(append_bounded(out, "price", 64));
  EXPECT_EQ(out, "price");
  EXPECT_EQ(bounded("", 0), "");
}

TEST(BoundedText, LongTextIsCutToTheBoundAndMarked) {
  const std::string long_name(4 * 1024 * 1024, 'a');
  std::string out = "filter: ";
  EXPECT_TRUE(append_bounded(out, long_name, 100));
  EXPECT_EQ(out.size(), 8 + 100u);
  EXPECT_TRUE(out.ends_with(kCutMarker));
  EXPECT_EQ(out.substr(8, 100 - kCutMarker.size()), std::string(100 - kCutMarker.size(), 'a'));
}

TEST(BoundedText, KeptInPlaceAsAppendBoundedWritesIntoAnEmptyString) {
  BoundedText<16> kept;
  EXPECT_EQ(kept.view(), "");
  const std::string text = "é€😀é€😀é€😀é€😀";
  for (size_t n = 0; n <= text.size(); ++n) {
    const std::string_view s = std::string_view(text).substr(0, n);
    kept.assign(s);
    EXPECT_EQ(kept.view(), bounded(s, 16)) << n;
    EXPECT_LE(kept.view().size(), 16u);
  }
  kept.assign("find");
  EXPECT_EQ(kept.view(), "find");  // a shorter text after a cut one: nothing of it is left
  kept.clear();
  EXPECT_EQ(kept.view(), "");
}

TEST(BoundedText, CutNeverSplitsACharacter) {
  // "é" is 2 bytes, "€" 3, "😀" 4: whatever the bound, the kept part is whole characters.
  const std::string text = "é€😀é€😀é€😀é€😀";
  for (size_t max = 0; max < text.size(); ++max) {
    const size_t kept = utf8_prefix_length(text, max);
    EXPECT_LE(kept, max);
    EXPECT_GE(kept + 3, max);
    EXPECT_NE(static_cast<unsigned char>(text[kept]) & 0xC0, 0x80) << "max " << max;
  }
  const std::string cut = bounded(text, 12);
  EXPECT_LE(cut.size(), 12u);
  EXPECT_EQ(cut, "é" + std::string(kCutMarker));
}

TEST(BoundedText, BoundSmallerThanTheMarkerKeepsThePartOfTheMarkerThatFits) {
  EXPECT_EQ(bounded("abcdefghijklmnop", 3), std::string(kCutMarker.substr(0, 3)));
}

TEST(BoundedText, InvalidUtf8IsCutAtTheBound) {
  const std::string bytes(32, '\x80');
  EXPECT_EQ(utf8_prefix_length(bytes, 10), 10u);
}

TEST(BoundedText, ALogValueOfMegabytesMakesALineOfAFewKiB) {
  log::Fields fields;
  fields.add("shape", std::string(6 * 1024 * 1024, 'f')).add("rule", "require_index");
  const std::string line = fields.message("docguard design rule violated");
  EXPECT_LT(line.size(), 4096u);
  EXPECT_NE(line.find(std::string(kCutMarker) + "\""), std::string::npos);
  EXPECT_NE(line.find("rule=require_index"), std::string::npos);
}

}  // namespace
}  // namespace docguard::base
