// Sections another layer adds to a report: their JSON members after the advisor's own, their
// HTML before the page ends; the text report leaves them out.
#include <bson/bson.h>
#include <gtest/gtest.h>

#include <string>

#include "docguard/advisor/report.h"

namespace docguard::advisor {
namespace {
namespace DOCGUARD_UNITY_ID {

ReportInput with_two_sections() {
  ReportInput input;
  input.source = "live traffic";
  input.sections = {{{{"first", "[1,2]"}}, "<h2>First</h2>"},
                    {{{"second", R"({"a":"b"})"}, {"third", "null"}}, "<h2>Second</h2>"}};
  return input;
}

TEST(ReportSections, JsonMembersFollowTheAdvisorsOwn) {
  const std::string json = render_json(with_two_sections());
  bson_error_t error;
  bson_t* doc = bson_new_from_json(reinterpret_cast<const uint8_t*>(json.data()),
                                   static_cast<ssize_t>(json.size()), &error);
  ASSERT_NE(doc, nullptr) << error.message << "\n" << json;
  EXPECT_TRUE(bson_has_field(doc, "collections"));
  EXPECT_TRUE(bson_has_field(doc, "first"));
  EXPECT_TRUE(bson_has_field(doc, "second.a"));
  EXPECT_TRUE(bson_has_field(doc, "third"));
  EXPECT_LT(json.find("\"unknown_facts\""), json.find("\"first\""));
  bson_destroy(doc);
}

TEST(ReportSections, HtmlBeforeThePageEnds) {
  const std::string html = render_html(with_two_sections());
  const size_t first = html.find("<h2>First</h2>");
  ASSERT_NE(first, std::string::npos);
  EXPECT_LT(first, html.find("<h2>Second</h2>"));
  EXPECT_TRUE(html.ends_with("<h2>Second</h2></body></html>\n"));
  EXPECT_EQ(render_text(with_two_sections()).find("First"), std::string::npos);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::advisor
