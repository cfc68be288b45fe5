// The one table of metric families (metric_families.h) against what /metrics exports and what
// docs/metrics.md says: a family added, renamed or relabelled in one place and not the others
// fails here.
#include "docguard/telemetry/metric_families.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "docguard/advisor/finding.h"
#include "docguard/rules/engine.h"
#include "docguard/rules/rule_set.h"
#include "docguard/settings/yaml_settings.h"
#include "docguard/telemetry/limit_eta_gauge.h"
#include "docguard/telemetry/metrics.h"
#include "docguard/telemetry/thread_cells.h"
#include "test_messages.h"

namespace docguard::telemetry {
namespace {

std::string type_name(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "?";
}

std::string type_name(prometheus::MetricType type) {
  switch (type) {
    case prometheus::MetricType::Counter:
      return "counter";
    case prometheus::MetricType::Gauge:
      return "gauge";
    case prometheus::MetricType::Histogram:
      return "histogram";
    default:
      return "other";
  }
}

const MetricFamily* table_entry(const std::string& name) {
  for (const MetricFamily& f : metric_families()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// The families registered elsewhere than Metrics and LimitEtaGauge (introspection's), checked by
// name against the table only until they register from it too.
bool registered_elsewhere(std::string_view name) {
  return name.starts_with("docguard_introspection_") || name.starts_with("docguard_collection_");
}

TEST(MetricFamilies, TheTableHasEachNameOnceAndWellFormedLabels) {
  std::set<std::string_view> names;
  for (const MetricFamily& f : metric_families()) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    EXPECT_TRUE(f.name.starts_with("docguard_")) << f.name;
    EXPECT_FALSE(f.help.empty()) << f.name;
    EXPECT_EQ(f.type == MetricType::kCounter, f.name.ends_with("_total")) << f.name;
    for (const std::string& label : f.label_names()) EXPECT_FALSE(label.empty()) << f.name;
  }
}

TEST(MetricFamilies, EachPerMessageFamilyHasItsOwnCellsSlot) {
  std::set<int> slots;
  for (const MetricFamily& f : metric_families()) {
    if (f.cells_slot < 0) continue;
    EXPECT_TRUE(slots.insert(f.cells_slot).second) << f.name;
    EXPECT_LT(static_cast<size_t>(f.cells_slot), ThreadCells::kFamilies) << f.name;
  }
  EXPECT_EQ(slots.size(), 14u);  // the families Metrics counts in its cells
}

TEST(MetricFamilies, MetricsExportsTheTableWithItsTypesAndLabels) {
  Metrics metrics;
  LimitEtaGauge etas(metrics.registry());
  // One series of every labelled family.
  const rules::NamespaceLabels ns{"shop", "orders", 7};
  metrics.on_command(ns, "insert", "web");
  metrics.on_document_size(ns, "insert", 100);
  metrics.on_array_length(ns, "items", 3);
  metrics.on_array_push(ns, "items", 1);
  metrics.on_read(ns, true, "web");
  metrics.on_lookup(ns, "customers");
  metrics.on_violation(ns, "max_document_bytes", rules::Action::kBlock, "web");
  metrics.on_candidate_violation(ns, "max_document_bytes", rules::Action::kWarn, "web");
  metrics.on_schema_unjudged(ns);
  metrics.on_schema_bypassed(ns, "web");
  metrics.on_guardrail_unknown(ns);
  metrics.on_unindexed_operation(ns, "web");
  metrics.upstream_connections("db1:27017").Set(1);
  advisor::Finding finding;
  finding.db = "shop";
  finding.collection = "orders";
  metrics.update_findings({finding});
  rules::PathForecast forecast;
  forecast.db = "shop";
  forecast.coll = "orders";
  forecast.field = "items";
  forecast.eta_seconds = 60;
  etas.update({forecast}, 5);
  // The array gauges, from what the engine saw.
  rules::Engine engine(settings::parse_rules(YAML::Node(), "defaults.yaml"), &metrics, nullptr);
  const auto insert = testing::request(R"({"insert": "orders", "$db": "shop"})", "documents",
                                       {R"({"_id": 1, "items": [1, 2]})"});
  engine.inspect(insert->cmd, rules::RequestContext{"web", "10.0.0.1:5000"});
  metrics.update_array_gauges(engine);
  metrics.serialize();  // folds the cells into the series

  std::set<std::string> exported;
  for (const auto& family : metrics.registry().Collect()) {
    exported.insert(family.name);
    const MetricFamily* entry = table_entry(family.name);
    ASSERT_NE(entry, nullptr) << family.name << " is exported but not in the table";
    EXPECT_EQ(type_name(entry->type), type_name(family.type)) << family.name;
    const std::vector<std::string> names = entry->label_names();
    const std::set<std::string> expected(names.begin(), names.end());
    for (const auto& series : family.metric) {
      std::set<std::string> labels;
      for (const auto& pair : series.label) labels.insert(pair.name);
      EXPECT_EQ(labels, expected) << family.name;
    }
  }
  for (const MetricFamily& f : metric_families()) {
    if (registered_elsewhere(f.name)) continue;
    EXPECT_TRUE(exported.count(std::string(f.name))) << f.name << " is in the table, not exported";
  }
}

// docs/metrics.md's table: one row a family, `| `name` | type | `labels` | notes |`.
std::map<std::string, std::pair<std::string, std::string>> documented_families() {
  std::ifstream in(std::string(DOCGUARD_SOURCE_DIR) + "/docs/metrics.md");
  std::map<std::string, std::pair<std::string, std::string>> rows;
  const std::regex row(
      R"(^\| `(docguard_[a-z_]+)` \| (counter|gauge|histogram) \| (`([^`]*)`)? \|)");
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, row)) {
      std::string labels = m[4].str();
      labels.erase(std::remove(labels.begin(), labels.end(), ' '), labels.end());
      rows[m[1].str()] = {m[2].str(), labels};
    }
  }
  return rows;
}

TEST(MetricFamilies, TheDocsListEveryFamilyWithItsTypeAndLabels) {
  const auto documented = documented_families();
  ASSERT_FALSE(documented.empty());
  for (const MetricFamily& f : metric_families()) {
    auto it = documented.find(std::string(f.name));
    ASSERT_NE(it, documented.end()) << f.name << " is not in docs/metrics.md";
    EXPECT_EQ(it->second.first, type_name(f.type)) << f.name;
    EXPECT_EQ(it->second.second, f.labels) << f.name;
  }
  for (const auto& [name, row] : documented) {
    EXPECT_NE(table_entry(name), nullptr) << name << " is documented but not in the table";
  }
}

}  // namespace
}  // namespace docguard::telemetry
