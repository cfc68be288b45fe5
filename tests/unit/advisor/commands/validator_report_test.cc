#include "docguard/advisor/detectors.h"
#include "docguard/advisor/report.h"
#include "docguard/advisor/validator.h"
#include "test_documents.h"

namespace docguard::advisor {
namespace {
namespace DOCGUARD_UNITY_ID {

using test_documents::document_with_array;
using test_documents::feed;

bool parses_as_json(const std::string& json) {
  bson_error_t error;
  bson_t* doc = bson_new_from_json(reinterpret_cast<const uint8_t*>(json.data()),
                                   static_cast<ssize_t>(json.size()), &error);
  if (doc) bson_destroy(doc);
  return doc != nullptr;
}

TEST(Validator, RequiresWhatEveryDocumentHasAndBoundsArrays) {
  AdvisorSettings settings;
  CollectionProfile p("shop", "orders", settings);
  for (int i = 0; i < 20; ++i) {
    bson_t* doc = document_with_array(i, "items", 3);
    if (i % 2) BSON_APPEND_UTF8(doc, "note", "sometimes");
    feed(p, doc);
  }
  const std::string command = build_collmod_command(p, settings);
  ASSERT_TRUE(parses_as_json(command)) << command;
  EXPECT_NE(command.find("\"collMod\": \"orders\""), std::string::npos);
  EXPECT_NE(command.find("\"required\": [\"_id\", \"name\", \"items\"]"), std::string::npos)
      << command;
  EXPECT_NE(command.find("\"maxItems\": 250"), std::string::npos);
  EXPECT_NE(command.find("\"note\": {\"bsonType\": \"string\"}"), std::string::npos);
}

TEST(Report, HtmlIsSelfContainedAndJsonParses) {
  AdvisorSettings settings;
  CollectionProfile p("shop", "products", settings);
  for (int i = 0; i < 30; ++i) feed(p, document_with_array(i, "reviews", i == 0 ? 3000 : i % 5));
  ReportInput input;
  input.source = "test <dump>";
  input.profiles = {&p};
  input.findings = run_offline_detectors(input.profiles, settings);
  input.lookups.push_back(LookupEdge{"shop.orders", "shop.products", 7});
  const std::string html = render_html(input);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("length of reviews"), std::string::npos);
  EXPECT_NE(html.find("test &lt;dump&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  const std::string json = render_json(input);
  EXPECT_TRUE(parses_as_json(json)) << json;
  EXPECT_NE(json.find("\"kind\":\"large_array\""), std::string::npos);
  EXPECT_NE(render_text(input).find("WARN  large_array"), std::string::npos);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::advisor
