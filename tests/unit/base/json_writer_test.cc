// The one JSON writer: commas placed by the writer at every depth, strings through the escaper,
// numbers as JSON has them, sections added whole.
#include "docguard/base/json_writer.h"

#include <gtest/gtest.h>

#include <limits>

namespace docguard::json {
namespace {

TEST(JsonWriter, CommasAtEveryDepth) {
  Writer w;
  w.begin_object().member("a", 1).key("b").begin_array();
  w.value("x").begin_object().end_object().begin_array().end_array().value(true);
  w.end_array().key("c").begin_object().member("d", false).end_object().end_object();
  EXPECT_EQ(w.take(), R"({"a":1,"b":["x",{},[],true],"c":{"d":false}})");
  Writer empty;
  empty.begin_object().end_object();
  EXPECT_EQ(empty.take(), "{}");
}

TEST(JsonWriter, StringsAndNamesAreEscaped) {
  Writer w;
  w.begin_object().member("k\"ey", std::string("a\nb\x01")).end_object();
  EXPECT_EQ(w.take(), R"({"k\"ey":"a\nb\u0001"})");
  Writer bidi;
  bidi.begin_array().value("\xE2\x80\xAE").value(std::string_view("\xFF", 1)).end_array();
  EXPECT_EQ(bidi.text().find("\xE2\x80\xAE"), std::string::npos) << bidi.text();
  EXPECT_EQ(bidi.text().find('\xFF'), std::string::npos) << bidi.text();
}

TEST(JsonWriter, NumbersAsJsonHasThem) {
  Writer w;
  w.begin_array().value(3.0).value(0.1).value(-2.5e-7).value(uint64_t{18446744073709551615u});
  w.value(std::numeric_limits<double>::quiet_NaN()).value(-std::numeric_limits<double>::infinity());
  w.value(int64_t{-4}).null().end_array();
  EXPECT_EQ(w.take(), "[3,0.1,-2.5e-07,18446744073709551615,null,null,-4,null]");
}

TEST(JsonWriter, ASectionIsAddedWhole) {
  Writer w;
  w.begin_object().member("mode", "warn").key("recording").raw(R"({"state":"stopped"})");
  w.key("list").begin_array().raw("1").raw("2").end_array().end_object();
  EXPECT_EQ(w.take(), R"({"mode":"warn","recording":{"state":"stopped"},"list":[1,2]})");
}

// Indented for a person: one member per line, a container of plain values on one line when it
// fits, an empty one as {} or [], and a long one broken like the others.
TEST(JsonWriter, IndentedFoldsWhatHoldsNoContainer) {
  Writer w(Writer::Layout::kIndented);
  w.begin_object().member("collMod", "orders").key("validator").begin_object();
  w.key("required").begin_array().value("_id").value("name").end_array();
  w.key("note").begin_object().member("bsonType", "string").end_object();
  w.key("none").begin_array().end_array();
  w.key("long").begin_array();
  for (int i = 0; i < 30; ++i) w.value(1000 + i);
  w.end_array().end_object().end_object();
  const std::string text = w.take();
  const std::string head = R"({
  "collMod": "orders",
  "validator": {
    "required": ["_id", "name"],
    "note": {"bsonType": "string"},
    "none": [],)";
  EXPECT_EQ(text.substr(0, head.size()), head) << text;
  EXPECT_NE(text.find("\"long\": [\n      1000,\n      1001,"), std::string::npos) << text;
  EXPECT_TRUE(text.ends_with("1029\n    ]\n  }\n}")) << text;
}

}  // namespace
}  // namespace docguard::json
