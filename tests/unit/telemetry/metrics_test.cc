// The per-message metrics are counted in per-thread cells and folded into the exported series at
// scrape time: /metrics must show what direct updates of the series would have shown.
#include "docguard/telemetry/metrics.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <limits>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "docguard/telemetry/thread_cells.h"

namespace docguard::telemetry {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(ThreadCellsTest, FoldAddsWhatEveryThreadCountedSinceTheLastFold) {
  prometheus::Registry registry;
  auto& counter = prometheus::BuildCounter().Name("c").Register(registry).Add({});
  const ThreadCells::Bounds bounds{1, 10, 100};
  auto& histogram = prometheus::BuildHistogram().Name("h").Register(registry).Add({}, bounds);
  auto& direct = prometheus::BuildHistogram().Name("d").Register(registry).Add({}, bounds);

  ThreadCells cells;
  const auto c = cells.add(counter);
  const auto h = cells.add(histogram, bounds);
  EXPECT_EQ(cells.add(counter).slot, c.slot);  // one registration per series

  const std::vector<double> values{0.5, 1, 2, 10, 11, 100, 1000};
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) cells.increment(c, 2);
      for (double v : values) cells.observe(h, v);
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < 4; ++t) {
    for (double v : values) direct.Observe(v);
  }
  EXPECT_EQ(counter.Value(), 0);  // nothing until the fold
  cells.fold();
  EXPECT_EQ(counter.Value(), 8000);
  const auto folded = histogram.Collect().histogram;
  const auto expected = direct.Collect().histogram;
  EXPECT_EQ(folded.sample_count, expected.sample_count);
  EXPECT_DOUBLE_EQ(folded.sample_sum, expected.sample_sum);
  ASSERT_EQ(folded.bucket.size(), expected.bucket.size());
  for (size_t i = 0; i < folded.bucket.size(); ++i) {
    EXPECT_EQ(folded.bucket[i].cumulative_count, expected.bucket[i].cumulative_count) << i;
  }

  cells.fold();  // nothing new: nothing added twice
  EXPECT_EQ(counter.Value(), 8000);
  cells.increment(c);
  cells.observe(h, 5);
  cells.fold();
  EXPECT_EQ(counter.Value(), 8001);
  EXPECT_EQ(histogram.Collect().histogram.sample_count, expected.sample_count + 1);
}

// observe() finds a value's bucket as prometheus::Histogram::Observe does: every value lands
// in the same bucket, on a bound, between two, past the last, and NaN.
TEST(ThreadCellsTest, ObservedValuesLandInPrometheusBuckets) {
  prometheus::Registry registry;
  ThreadCells::Bounds bounds;
  for (double b = 1; b < 5e7; b *= 2.5) bounds.push_back(b);
  auto& histogram = prometheus::BuildHistogram().Name("h").Register(registry).Add({}, bounds);
  auto& direct = prometheus::BuildHistogram().Name("d").Register(registry).Add({}, bounds);
  auto& nan_cells = prometheus::BuildHistogram().Name("n").Register(registry).Add({}, bounds);
  auto& nan_direct = prometheus::BuildHistogram().Name("m").Register(registry).Add({}, bounds);
  ThreadCells cells;
  const auto h = cells.add(histogram, bounds);
  const auto n = cells.add(nan_cells, bounds);
  std::vector<double> values{-1, 0, 1e9, std::numeric_limits<double>::infinity()};
  for (double b : bounds) {
    for (double v : {b, b - 0.25, b + 0.25}) values.push_back(v);
  }
  for (double v : values) {
    cells.observe(h, v);
    direct.Observe(v);
  }
  cells.observe(n, std::numeric_limits<double>::quiet_NaN());
  nan_direct.Observe(std::numeric_limits<double>::quiet_NaN());
  cells.fold();
  for (auto [got, want] : {std::pair{&histogram, &direct}, std::pair{&nan_cells, &nan_direct}}) {
    const auto folded = got->Collect().histogram;
    const auto expected = want->Collect().histogram;
    EXPECT_EQ(folded.sample_count, expected.sample_count);
    ASSERT_EQ(folded.bucket.size(), expected.bucket.size());
    for (size_t i = 0; i < folded.bucket.size(); ++i) {
      EXPECT_EQ(folded.bucket[i].cumulative_count, expected.bucket[i].cumulative_count) << i;
    }
  }
}

TEST(ThreadCellsTest, ManySeriesAcrossChunks) {
  prometheus::Registry registry;
  auto& family = prometheus::BuildCounter().Name("many").Register(registry);
  ThreadCells cells;
  std::vector<prometheus::Counter*> series;
  for (int i = 0; i < 2000; ++i) {
    auto& counter = family.Add({{"i", std::to_string(i)}});
    series.push_back(&counter);
    const auto handle = cells.find(0, 0, {std::to_string(i)}, [&] { return cells.add(counter); });
    cells.increment(handle, i);
  }
  std::thread other([&] {
    for (int i = 0; i < 2000; i += 7) {
      cells.increment(cells.find(0, 0, {std::to_string(i)}, [&] { return cells.add(*series[i]); }));
    }
  });
  other.join();
  cells.fold();
  for (int i = 0; i < 2000; ++i) {
    EXPECT_EQ(series[i]->Value(), i + (i % 7 == 0 ? 1 : 0)) << i;
  }
}

// The last series of a family is found again without the index; label sets that join to the
// same text ("ab"+"c" and "a"+"bc"), a prefix, another family, another prefix number: each its
// own series.
TEST(ThreadCellsTest, TheLastSeriesOfAFamilyIsNeverAnotherLabelSet) {
  prometheus::Registry registry;
  auto& family = prometheus::BuildCounter().Name("sets").Register(registry);
  ThreadCells cells;
  std::map<std::string, prometheus::Counter*> by_name;
  auto count = [&](uint8_t fam, uint64_t prefix, ThreadCells::LabelValues values,
                   const std::string& name) {
    cells.increment(cells.find(fam, prefix, values, [&] {
      auto& c = family.Add({{"n", name}});
      by_name[name] = &c;
      return cells.add(c);
    }));
  };
  for (int round = 0; round < 3; ++round) {
    count(0, 0, {"ab", "c"}, "ab|c");
    count(0, 0, {"ab", "c"}, "ab|c");
    count(0, 0, {"a", "bc"}, "a|bc");
    count(0, 0, {"a"}, "a");
    count(0, 0, {"a", "bc", ""}, "a|bc|");
    count(1, 0, {"a", "bc"}, "1:a|bc");
    count(1, 7, {"a", "bc"}, "1:7:a|bc");
    count(1, 7, {"a", "bc"}, "1:7:a|bc");
    count(1, 8, {"a", "bc"}, "1:8:a|bc");
  }
  cells.fold();
  EXPECT_EQ(by_name.at("ab|c")->Value(), 6);
  EXPECT_EQ(by_name.at("a|bc")->Value(), 3);
  EXPECT_EQ(by_name.at("a")->Value(), 3);
  EXPECT_EQ(by_name.at("a|bc|")->Value(), 3);
  EXPECT_EQ(by_name.at("1:a|bc")->Value(), 3);
  EXPECT_EQ(by_name.at("1:7:a|bc")->Value(), 6);
  EXPECT_EQ(by_name.at("1:8:a|bc")->Value(), 3);
}

// Traffic that alternates between label sets (an insert, then a find) finds them again among
// the family's earlier series, and more label sets than those remembered still each count in
// their own series, whether the update went through add_to_last or find.
TEST(ThreadCellsTest, AlternatingLabelSetsEachCountInTheirOwnSeries) {
  prometheus::Registry registry;
  auto& family = prometheus::BuildCounter().Name("alternating").Register(registry);
  ThreadCells cells;
  std::map<std::string, prometheus::Counter*> by_name;
  int made = 0;
  auto count = [&](std::string_view name) {
    if (cells.add_to_last(2, 5, {name}, 1, false)) return;
    cells.increment(cells.find(2, 5, {name}, [&] {
      ++made;
      auto& c = family.Add({{"n", std::string(name)}});
      by_name[std::string(name)] = &c;
      return cells.add(c);
    }));
  };
  const std::vector<std::string> two = {"insert", "find"};
  const std::vector<std::string> six = {"a", "b", "c", "d", "e", "f"};
  for (int round = 0; round < 50; ++round) {
    for (const auto& n : two) count(n);
  }
  for (int round = 0; round < 50; ++round) {
    for (const auto& n : six) count(n);
  }
  cells.fold();
  EXPECT_EQ(made, 8);  // once per label set: the thread's index keeps them all
  EXPECT_EQ(by_name.at("insert")->Value(), 50);
  EXPECT_EQ(by_name.at("find")->Value(), 50);
  for (const auto& n : six) EXPECT_EQ(by_name.at(n)->Value(), 50) << n;
}

// A command's two counters are found as a pair once met (ThreadCells::increment_known_pair):
// more pairs than a thread remembers, in turn; a command and an app that join to the same text
// ("ab" with "c", "a" with "bc"); one command and app in two namespaces; each still counts in
// its own series of each family.
TEST(MetricsTest, CommandCountersFoundAsAPairEachCountTheirOwnSeries) {
  const rules::NamespaceLabels items{"shop", "items", 1};
  const rules::NamespaceLabels orders{"shop", "orders", 2};
  struct Call {
    const rules::NamespaceLabels& ns;
    std::string command, app;
  };
  const std::vector<Call> calls = {{items, "ab", "c"},          {items, "a", "bc"},
                                   {orders, "ab", "c"},         {items, "insert", "shop-api"},
                                   {items, "find", "shop-api"}, {orders, "find", ""},
                                   {items, "find", ""}};
  Metrics metrics;
  for (int round = 0; round < 10; ++round) {
    for (const Call& c : calls) metrics.on_command(c.ns, c.command, c.app);
  }
  for (int i = 0; i < 5; ++i) metrics.on_command(items, "find", "");
  const std::string text = metrics.serialize();
  for (const auto* line : {
           R"(docguard_commands_total{collection="items",command="ab",db="shop"} 10)",
           R"(docguard_commands_total{collection="items",command="a",db="shop"} 10)",
           R"(docguard_commands_total{collection="orders",command="ab",db="shop"} 10)",
           R"(docguard_commands_total{collection="items",command="insert",db="shop"} 10)",
           R"(docguard_commands_total{collection="items",command="find",db="shop"} 25)",
           R"(docguard_commands_total{collection="orders",command="find",db="shop"} 10)",
           R"(docguard_app_commands_total{app="c",command="ab"} 20)",
           R"(docguard_app_commands_total{app="bc",command="a"} 10)",
           R"(docguard_app_commands_total{app="shop-api",command="insert"} 10)",
           R"(docguard_app_commands_total{app="shop-api",command="find"} 10)",
           R"(docguard_app_commands_total{app="",command="find"} 25)",
       }) {
    EXPECT_TRUE(has_line(text, line)) << line << "\n" << text;
  }
}

// Label values come from clients (a command's name, a namespace, an app's name) and may hold any
// byte but NUL: values whose bytes join to the same text, with any byte between them, are still
// different label sets, in the thread's index, its last series, its pairs and the shared index.
TEST(MetricsTest, LabelValuesThatJoinToOneTextAreDifferentSeries) {
  const std::string sep(1, '\x1f');
  Metrics metrics;
  for (int round = 0; round < 3; ++round) {
    metrics.on_command({"a" + sep + "b", "c", 1}, "find", "");
    metrics.on_command({"a", "b" + sep + "c", 2}, "find", "");
    metrics.on_command({"shop", "items", 3}, "x" + sep + "y", "z");
    metrics.on_command({"shop", "items", 3}, "x", "y" + sep + "z");
    metrics.on_document_size({"shop", "items", 3}, "in" + sep + "sert", 10);
    metrics.on_document_size({"shop", "items", 3}, "in", 10);
  }
  const std::string text = metrics.serialize();
  for (const std::string& line : std::vector<std::string>{
           "docguard_commands_total{collection=\"c\",command=\"find\",db=\"a" + sep + "b\"} 3",
           "docguard_commands_total{collection=\"b" + sep + "c\",command=\"find\",db=\"a\"} 3",
           "docguard_commands_total{collection=\"items\",command=\"x" + sep + "y\",db=\"shop\"} 3",
           "docguard_commands_total{collection=\"items\",command=\"x\",db=\"shop\"} 3",
           "docguard_app_commands_total{app=\"z\",command=\"x" + sep + "y\"} 3",
           "docguard_app_commands_total{app=\"y" + sep + "z\",command=\"x\"} 3",
           "docguard_document_size_bytes_count{collection=\"items\",db=\"shop\",source=\"in" + sep +
               "sert\"} 3",
           "docguard_document_size_bytes_count{collection=\"items\",db=\"shop\",source=\"in\"} 3",
       }) {
    EXPECT_TRUE(has_line(text, line)) << line << "\n" << text;
  }
}

TEST(MetricsTest, ScrapeShowsThePerMessageMetrics) {
  const rules::NamespaceLabels kShopItems{"shop", "items", 1};
  Metrics metrics;
  std::thread io([&] {
    metrics.on_command(kShopItems, "insert", "shop-api");
    metrics.on_document_size(kShopItems, "insert", 300);
    metrics.on_array_length(kShopItems, "tags", 3);
    metrics.on_array_push(kShopItems, "tags", 2);
    metrics.on_read(kShopItems, true, "");
    metrics.on_lookup(kShopItems, "users");
    metrics.on_violation(kShopItems, "max_array_length", rules::Action::kWarn, "shop-api");
    metrics.add_client_bytes(100);
    metrics.add_upstream_bytes(40);
    metrics.observe_inspection(3e-6);
  });
  io.join();
  metrics.on_command(kShopItems, "insert", "shop-api");
  metrics.on_command(kShopItems, "insert", "");
  // Another id for the same labels (two engines' statistics): still the one series.
  metrics.on_command({"shop", "items", 2}, "insert", "");
  metrics.on_command({"shop", "orders", 3}, "insert", "");
  metrics.add_client_bytes(1);
  const std::string text = metrics.serialize();
  // Per namespace and per app in two families (their product would be most of the exposition).
  EXPECT_TRUE(
      has_line(text, R"(docguard_commands_total{collection="items",command="insert",db="shop"} 4)"))
      << text;
  EXPECT_TRUE(has_line(
      text, R"(docguard_commands_total{collection="orders",command="insert",db="shop"} 1)"))
      << text;
  EXPECT_TRUE(has_line(text, R"(docguard_app_commands_total{app="shop-api",command="insert"} 2)"))
      << text;
  EXPECT_TRUE(has_line(text, R"(docguard_app_commands_total{app="",command="insert"} 3)")) << text;
  EXPECT_TRUE(
      has_line(text, R"(docguard_message_bytes_total{direction="client_to_upstream"} 101)"));
  EXPECT_TRUE(has_line(text, R"(docguard_message_bytes_total{direction="upstream_to_client"} 40)"));
  EXPECT_TRUE(has_line(
      text,
      R"(docguard_document_size_bytes_bucket{collection="items",db="shop",source="insert",le="1024"} 1)"));
  EXPECT_TRUE(has_line(
      text,
      R"(docguard_document_size_bytes_sum{collection="items",db="shop",source="insert"} 300)"));
  EXPECT_TRUE(has_line(
      text, R"(docguard_array_length_bucket{collection="items",db="shop",field="tags",le="5"} 1)"));
  EXPECT_TRUE(has_line(
      text, R"(docguard_array_push_elements_total{collection="items",db="shop",field="tags"} 2)"));
  EXPECT_TRUE(has_line(text, R"(docguard_reads_total{collection="items",db="shop"} 1)"));
  EXPECT_TRUE(
      has_line(text, R"(docguard_reads_with_lookup_total{collection="items",db="shop"} 1)"));
  EXPECT_TRUE(
      has_line(text, R"(docguard_lookup_total{collection="items",db="shop",from="users"} 1)"));
  EXPECT_TRUE(has_line(
      text,
      R"(docguard_violations_total{action="warn",app="shop-api",collection="items",db="shop",rule="max_array_length"} 1)"));
  EXPECT_TRUE(has_line(text, R"(docguard_inspection_seconds_bucket{le="5e-06"} 1)"));
  EXPECT_TRUE(has_line(text, R"(docguard_inspection_seconds_count 1)"));
  // A second scrape adds nothing that was already folded.
  EXPECT_TRUE(
      has_line(metrics.serialize(),
               R"(docguard_commands_total{collection="items",command="insert",db="shop"} 4)"));
}

}  // namespace
}  // namespace docguard::telemetry
