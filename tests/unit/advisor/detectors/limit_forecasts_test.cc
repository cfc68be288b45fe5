// The growth forecast in the live advisor: forecasts under the horizon are approaching_limit
// findings naming the apps that grow the field; /report lists every forecast soonest first with
// the pattern to apply.
#include "docguard/advisor/limit_forecasts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "docguard/advisor/live_advisor.h"

namespace docguard::advisor {
namespace {
namespace DOCGUARD_UNITY_ID {

rules::PathForecast forecast(const std::string& coll, double eta, size_t documents = 3) {
  rules::PathForecast f;
  f.db = "shop";
  f.coll = coll;
  f.field = "items";
  f.limit = rules::ForecastLimit::kArrayLength;
  f.bound = 100;
  f.eta_seconds = eta;
  f.rate = 2;
  f.length = 40;
  f.namespace_rate = 1.5;
  f.growing_documents = documents;
  // {_id: 7} as BSON
  f.id = {14, 0, 0, 0, 0x10, '_', 'i', 'd', 0, 7, 0, 0, 0, 0};
  return f;
}

AdvisorSettings settings() {
  AdvisorSettings s;
  s.live_sample_every = 1;
  s.forecast_horizon = 3600;
  return s;
}

TEST(LimitForecastsTest, UnderTheHorizonIsAFindingWithTheAppsThatGrowIt) {
  LiveAdvisor advisor(settings());
  advisor.set_forecast_source([] {
    return std::vector<rules::PathForecast>{forecast("carts", 600), forecast("logs", 86400)};
  });
  advisor.on_unbounded_push("shop", "carts", "items", 1, "cart-service");
  const auto findings = advisor.findings();
  std::vector<const Finding*> approaching;
  for (const Finding& f : findings) {
    if (f.kind == Finding::Kind::kApproachingLimit) approaching.push_back(&f);
  }
  ASSERT_EQ(approaching.size(), 1u);  // logs: a day away, beyond the hour's horizon
  const Finding& f = *approaching[0];
  EXPECT_EQ(f.collection, "carts");
  EXPECT_EQ(f.field, "items");
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_EQ(f.apps, std::vector<std::string>{"cart-service"});
  EXPECT_NE(f.evidence.find("_id 7"), std::string::npos) << f.evidence;
  EXPECT_NE(f.evidence.find("array_length limit (100 elements) in about 10.0 min"),
            std::string::npos)
      << f.evidence;
  EXPECT_EQ(f.pattern, "bucket");

  const std::string json = advisor.render(ReportFormat::kJson);
  const size_t carts = json.find("\"collection\":\"carts\",\"field\":\"items\",\"limit\"");
  const size_t logs = json.find("\"collection\":\"logs\",\"field\":\"items\",\"limit\"");
  ASSERT_NE(carts, std::string::npos) << json;
  ASSERT_NE(logs, std::string::npos) << json;
  EXPECT_LT(carts, logs);  // soonest first
  EXPECT_NE(json.find("\"eta_seconds\":600"), std::string::npos) << json;
  EXPECT_NE(json.find("\"within_horizon\":false"), std::string::npos) << json;
  const std::string html = advisor.render(ReportFormat::kHtml);
  EXPECT_NE(html.find("Approaching limits (2)"), std::string::npos);
}

TEST(LimitForecastsTest, PatternFollowsWhatGrows) {
  const AdvisorSettings s = settings();
  auto one = forecast("carts", 10, 1);  // the only growing document: an outlier
  auto size = forecast("carts", 10);
  size.limit = rules::ForecastLimit::kMaxBsonSize;
  size.bound = rules::kMaxBsonDocumentBytes;
  const auto rows = approaching_limits({one, size, forecast("carts", 10)}, s, 2);
  ASSERT_EQ(rows.size(), 2u);  // at most `max` rows
  EXPECT_EQ(rows[0].pattern, "outlier");
  EXPECT_EQ(rows[1].pattern, "subset");
  EXPECT_NE(rows[0].suggestion.find("$slice"), std::string::npos);
  EXPECT_EQ(eta_text(90), "90 s");
  EXPECT_EQ(eta_text(5400), "90.0 min");
  EXPECT_EQ(eta_text(3 * 3600), "3.0 h");
  EXPECT_EQ(eta_text(3 * 86400), "3.0 days");
  EXPECT_EQ(eta_text(0), "now");
}

TEST(LimitForecastsTest, NoSourceNoSection) {
  LiveAdvisor advisor(settings());
  EXPECT_NE(advisor.render(ReportFormat::kJson).find("\"approaching_limits\":[]"),
            std::string::npos);
  EXPECT_EQ(advisor.render(ReportFormat::kHtml).find("Approaching limits"), std::string::npos);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::advisor
