// The exposition's series budget. A platform team's traffic (100 appNames writing to 200
// collections with 4 commands, half the pairs) once gave 34,835 series, most of them
// docguard_commands_total crossing app x namespace x command, and 77 MB of memory; the defaults
// allowed about 330,000. Now the app is a dimension of its own family and the whole exposition
// has a budget.
#include <gtest/gtest.h>
#include <malloc.h>
#include <yaml-cpp/yaml.h>

#include <sstream>
#include <string>

#include "docguard/rules/engine.h"
#include "docguard/rules/rule_set.h"
#include "docguard/settings/yaml_settings.h"
#include "docguard/telemetry/metrics.h"
#include "test_messages.h"

namespace docguard::telemetry {
namespace {

size_t series_lines(const std::string& exposition) {
  std::istringstream in(exposition);
  size_t lines = 0;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') ++lines;
  }
  return lines;
}

size_t lines_of(const std::string& exposition, const std::string& family) {
  std::istringstream in(exposition);
  size_t lines = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(family + "{") || line.starts_with(family + " ")) ++lines;
  }
  return lines;
}

// What 100 apps send to 200 collections: inserts with arrays, finds, $push updates, deletes.
void drive(rules::Engine& engine, int apps, int collections) {
  for (int a = 0; a < apps; ++a) {
    const std::string app = "service-" + std::to_string(a);
    const rules::RequestContext ctx{app, "10.0.0.1:5000"};
    for (int c = a % 2; c < collections; c += 2) {
      const std::string coll = "coll" + std::to_string(c);
      const std::string db = R"(, "$db": "fleet"})";
      const auto insert = testing::request(R"({"insert": ")" + coll + '"' + db, "documents",
                                           {R"({"_id": 1, "tags": [1, 2], "items": [{"q": 1}]})"});
      const auto find =
          testing::request(R"({"find": ")" + coll + R"(", "filter": {"_id": 1})" + db);
      const auto update = testing::request(
          R"({"update": ")" + coll + '"' + db, "updates",
          {R"({"q": {"_id": 1}, "u": {"$push": {"tags": {"$each": [3], "$slice": -10}}}})"});
      const auto remove = testing::request(R"({"delete": ")" + coll + '"' + db, "deletes",
                                           {R"({"q": {"_id": 1}, "limit": 1})"});
      for (const auto* m : {insert.get(), find.get(), update.get(), remove.get()}) {
        engine.inspect(m->cmd, ctx);
      }
    }
  }
}

TEST(MetricsBudget, AHundredAppsOnTwoHundredCollectionsStayUnderTenThousandSeries) {
  const size_t before = mallinfo2().uordblks;
  {
    Metrics metrics;  // the defaults: metrics.max_series and the engine's tracking bounds
    rules::Engine engine(settings::parse_rules(YAML::Node(), "defaults.yaml"), &metrics, nullptr);
    drive(engine, 100, 200);
    metrics.update_array_gauges(engine);
    const std::string text = metrics.serialize();
    EXPECT_LE(series_lines(text), 10'000u);
    // The app is in a family of its own: apps x commands, not apps x namespaces x commands.
    EXPECT_EQ(text.find("docguard_commands_total{app="), std::string::npos);
    EXPECT_LE(lines_of(text, "docguard_app_commands_total"), (64u + 1) * 4);
    EXPECT_GE(lines_of(text, "docguard_app_commands_total"), 4u);
    // Every namespace's commands are still counted, past the budget under "_other".
    EXPECT_NE(
        text.find(R"(docguard_commands_total{collection="coll0",command="insert",db="fleet"})"),
        std::string::npos);
    const size_t used = mallinfo2().uordblks - before;
    // About 3 KB a series: the budget bounds memory too (the unbounded run took 77 MB).
    EXPECT_LT(used, 40u << 20) << used;
    std::printf("series lines %zu, heap %zu KiB\n", series_lines(text), used >> 10);
  }
}

TEST(MetricsBudget, PastTheBudgetNewLabelSetsAreCountedUnderOther) {
  Metrics metrics(MetricsSettings{1'000});
  for (int c = 0; c < 2'000; ++c) {
    const std::string coll = "c" + std::to_string(c);
    metrics.on_command({"db", coll, static_cast<uint64_t>(c + 1)}, "insert", "app");
    metrics.on_command({"db", coll, static_cast<uint64_t>(c + 1)}, "insert", "app");
  }
  const std::string text = metrics.serialize();
  // The budget, plus at most one overflow series per family.
  EXPECT_LE(series_lines(text), 1'000u + 2u);
  EXPECT_NE(text.find(R"(docguard_commands_total{collection="c0",command="insert",db="db"} 2)"),
            std::string::npos);
  EXPECT_NE(
      text.find(R"(docguard_commands_total{collection="_other",command="_other",db="_other"})"),
      std::string::npos)
      << text;
  // Nothing is lost: the series and the overflow add up to every command.
  double total = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("docguard_commands_total{"))
      total += std::stod(line.substr(line.rfind(' ')));
  }
  EXPECT_EQ(total, 4'000);
  EXPECT_NE(text.find("docguard_metric_series_over_budget_total"), std::string::npos);
}

}  // namespace
}  // namespace docguard::telemetry
