#include "docguard/base/log_escape.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "docguard/base/structured_log.h"

namespace docguard::log {
namespace {

std::string text(std::string_view s) {
  std::string out;
  append_escaped(out, s, Escaping::kText);
  return out;
}

std::string json(std::string_view s) {
  std::string out;
  append_escaped(out, s, Escaping::kJson);
  return out;
}

TEST(LogEscape, CleanTextIsReturnedUnchangedWithoutACopy) {
  for (const std::string_view clean :
       {std::string_view(""), std::string_view("shop.products"),
        std::string_view("items.$[].price = 3 'quoted' \"too\""),
        std::string_view("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80")}) {
    std::string scratch;
    const std::string_view out = escaped(clean, scratch, Escaping::kText);
    EXPECT_EQ(out.data(), clean.data()) << clean;
    EXPECT_EQ(out.size(), clean.size()) << clean;
    EXPECT_TRUE(scratch.empty()) << clean;
    EXPECT_EQ(first_byte_to_escape(clean, Escaping::kText), clean.size()) << clean;
  }
}

TEST(LogEscape, EveryControlByteAndDelIsEscaped) {
  for (int c = 0; c < 0x20; ++c) {
    const std::string in = std::string("a") + static_cast<char>(c) + "b";
    std::string expected;
    if (c == '\n') {
      expected = "a\\nb";
    } else if (c == '\r') {
      expected = "a\\rb";
    } else if (c == '\t') {
      expected = "a\\tb";
    } else {
      char buf[16];
      std::snprintf(buf, sizeof buf, "a\\u%04xb", c);
      expected = buf;
    }
    EXPECT_EQ(text(in), expected) << c;
    EXPECT_EQ(json(in), expected) << c;
    EXPECT_EQ(first_byte_to_escape(in, Escaping::kText), 1u) << c;
  }
  EXPECT_EQ(text("a\x7f"), "a\\u007f");
  EXPECT_EQ(json("a\x7f"), "a\\u007f");
}

TEST(LogEscape, EscapedOutputHoldsOnlyPrintableAscii) {
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  for (const Escaping e : {Escaping::kText, Escaping::kQuotedText, Escaping::kJson}) {
    std::string out;
    append_escaped(out, all, e);
    for (const char c : out) {
      EXPECT_TRUE(c >= 0x20 && c < 0x7f) << static_cast<int>(static_cast<unsigned char>(c));
    }
  }
}

TEST(LogEscape, ForgedLogLineStaysOnOneLine) {
  const std::string_view app = "evil\n2026-12-01T00:00:00.000 critical FORGED\x1b[31m";
  EXPECT_EQ(text(app), "evil\\n2026-12-01T00:00:00.000 critical FORGED\\u001b[31m");
}

TEST(LogEscape, BackslashAndQuotes) {
  EXPECT_EQ(text(R"(a\nb "q")"), R"(a\\nb "q")");
  std::string quoted;
  append_escaped(quoted, R"(a\b "q")", Escaping::kQuotedText);
  EXPECT_EQ(quoted, R"(a\\b \"q\")");
  EXPECT_EQ(json(R"(a\b "q")"), R"(a\\b \"q\")");
}

TEST(LogEscape, InvalidUtf8IsShownAsBytes) {
  EXPECT_EQ(text("a\xff"), "a\\xff");
  EXPECT_EQ(text("\x80z"), "\\x80z");                           // lone continuation byte
  EXPECT_EQ(text("\xc3"), "\\xc3");                             // truncated sequence
  EXPECT_EQ(text("\xc3("), "\\xc3(");                           // bad continuation
  EXPECT_EQ(text("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(text("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");           // overlong, 3 bytes
  EXPECT_EQ(text("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a UTF-16 surrogate
  EXPECT_EQ(text("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(text("\xf5\x80\x80\x80"), "\\xf5\\x80\\x80\\x80");
  EXPECT_EQ(text("ok\xe2\x82"), "ok\\xe2\\x82");  // cut mid-character at the end
  // In JSON the escape reads back as the same visible text.
  EXPECT_EQ(json("a\xff"), "a\\\\xff");
  // Valid characters around an invalid byte are kept.
  EXPECT_EQ(text("\xc3\xa9\xff\xc3\xa9"), "\xc3\xa9\\xff\xc3\xa9");
}

TEST(LogEscape, InvisibleLineBreaksAndReorderingAreEscaped) {
  EXPECT_EQ(text("a\xc2\x85"
                 "b"),
            "a\\u0085b");                                           // NEL, a C1 control
  EXPECT_EQ(text("\xc2\x9b"), "\\u009b");                           // CSI
  EXPECT_EQ(text("\xe2\x80\xa8"), "\\u2028");                       // line separator
  EXPECT_EQ(text("\xe2\x80\xae"), "\\u202e");                       // right-to-left override
  EXPECT_EQ(json("\xe2\x81\xa6"), "\\u2066");                       // left-to-right isolate
  EXPECT_EQ(text("\xc2\xa0\xe2\x80\xa7"), "\xc2\xa0\xe2\x80\xa7");  // NBSP, U+2027: kept
}

TEST(LogFields, TextValuesAreEscapedAndQuotedWhenTheyCouldPoseAsFields) {
  Fields fields;
  fields.add("app", "evil\nFORGED").add("ns", "d.a b peer=1.2.3.4").add("empty", "");
  const std::string payload = fields.message("m");
  const auto last = payload.rfind(kFieldsSeparator);
  EXPECT_EQ(payload.substr(last + 1), R"(app=evil\nFORGED ns="d.a b peer=1.2.3.4" empty=-)");
  EXPECT_EQ(payload.front(), kFieldsSeparator);
  EXPECT_NE(payload.find(R"("app":"evil\nFORGED")"), std::string::npos);
}

}  // namespace
}  // namespace docguard::log
