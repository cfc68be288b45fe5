// docguard_limit_eta_seconds is bounded like every labelled family: the nearest few series per
// namespace, a cap in all, and series whose forecast went away are removed.
#include "docguard/telemetry/limit_eta_gauge.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <sstream>
#include <string>
#include <vector>

namespace docguard::telemetry {
namespace {

rules::PathForecast forecast(const std::string& coll, const std::string& field, double eta,
                             rules::ForecastLimit limit = rules::ForecastLimit::kArrayLength) {
  rules::PathForecast f;
  f.db = "shop";
  f.coll = coll;
  f.field = field;
  f.limit = limit;
  f.eta_seconds = eta;
  return f;
}

std::string exposition(prometheus::Registry& registry) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry.Collect());
  return out.str();
}

TEST(LimitEtaGaugeTest, KeepsTheNearestPerNamespaceAndRemovesGoneSeries) {
  prometheus::Registry registry;
  LimitEtaGauge gauge(registry);
  std::vector<rules::PathForecast> soonest_first;
  for (int i = 0; i < 8; ++i)
    soonest_first.push_back(forecast("carts", "f" + std::to_string(i), i));
  soonest_first.push_back(forecast("logs", "lines", 100, rules::ForecastLimit::kMaxBsonSize));
  gauge.update(soonest_first, 3);
  EXPECT_EQ(gauge.series(), 4u);  // 3 of carts (the nearest), 1 of logs
  std::string text = exposition(registry);
  // prometheus-cpp writes labels sorted by name
  EXPECT_NE(text.find("docguard_limit_eta_seconds{collection=\"carts\",db=\"shop\",field=\"f0\","
                      "limit=\"array_length\"} 0"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("field=\"f2\""), std::string::npos);
  EXPECT_EQ(text.find("field=\"f3\""), std::string::npos);
  EXPECT_NE(text.find("limit=\"16MB\"} 100"), std::string::npos) << text;

  gauge.update({forecast("carts", "f5", 7)}, 3);  // the others' forecasts went away
  EXPECT_EQ(gauge.series(), 1u);
  text = exposition(registry);
  EXPECT_EQ(text.find("field=\"f0\""), std::string::npos) << text;
  EXPECT_NE(text.find("field=\"f5\",limit=\"array_length\"} 7"), std::string::npos) << text;
}

TEST(LimitEtaGaugeTest, AtMostMaxSeriesInAll) {
  prometheus::Registry registry;
  LimitEtaGauge gauge(registry);
  std::vector<rules::PathForecast> many;
  for (size_t i = 0; i < LimitEtaGauge::kMaxSeries + 500; ++i) {
    many.push_back(forecast("c" + std::to_string(i), "f", static_cast<double>(i)));
  }
  gauge.update(many, 5);
  EXPECT_EQ(gauge.series(), LimitEtaGauge::kMaxSeries);
}

}  // namespace
}  // namespace docguard::telemetry
