// The forecast through the engine, on a fixed clock: documents learned from introspection,
// inserts, pushes with and without $slice, replacements, and the one report per document when
// its forecast falls under the horizon.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "docguard/base/key_parts.h"
#include "docguard/codec/bson_elements.h"
#include "docguard/rules/document_tracker.h"
#include "docguard/rules/engine.h"
#include "docguard/settings/yaml_settings.h"
#include "test_messages.h"

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

using settings::parse_rules;

using testing::Bson;
using testing::int_array;
using testing::request;

const RequestContext kCtx{"test-app", "127.0.0.1:5000"};

constexpr const char* kBounds = R"(
rules:
  - match: "shop.*"
    action: warn
    array_length: { tags: 1000 }
    max_document_bytes: 1MB
)";

class EngineForecastTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine =
        std::make_unique<Engine>(parse_rules(YAML::Load(kBounds), "test.yaml"), nullptr, nullptr);
    engine->set_clock([this] { return Engine::Clock::time_point(now); });
  }
  void at(double seconds) {
    now =
        std::chrono::duration_cast<Engine::Clock::duration>(std::chrono::duration<double>(seconds));
  }
  void run(const std::string& json) { engine->inspect(request(json)->cmd, kCtx); }
  // One element of about 200 bytes, as the integration test pushes.
  void push(int id, const std::string& extra = "") {
    run(R"({"update": "items", "$db": "shop", "updates": [{"q": {"_id": )" + std::to_string(id) +
        R"(}, "u": {"$push": {"tags": )" +
        (extra.empty() ? "\"" + std::string(190, 'x') + "\"" : extra) + "}}}]}");
  }
  void insert(int id, int tags) {
    run(R"({"insert": "items", "$db": "shop", "documents": [{"_id": )" + std::to_string(id) +
        R"(, "tags": )" + int_array(tags) + "}]}");
  }
  std::vector<PathForecast> forecasts(ForecastLimit limit) const {
    auto all = engine->limit_forecasts();
    std::erase_if(all, [&](const PathForecast& p) { return p.limit != limit; });
    return all;
  }

  std::unique_ptr<Engine> engine;
  Engine::Clock::duration now{};
};

TEST_F(EngineForecastTest, AStoredLongArrayIsForecastFromItsStoredLength) {
  at(100);
  Bson stored(R"({"_id": 7, "tags": )" + int_array(500) + "}");
  engine->learn_stored_document("shop", "items", stored.view());
  for (int i = 1; i <= 20; ++i) {
    at(100 + i);
    push(7);
  }
  const auto array = forecasts(ForecastLimit::kArrayLength);
  ASSERT_EQ(array.size(), 1u);
  EXPECT_EQ(array[0].length, 520);
  EXPECT_NEAR(array[0].rate, 1.0, 0.05);
  EXPECT_NEAR(array[0].eta_seconds, 480, 25);  // not 980: it started at 500
  EXPECT_EQ(array[0].bound, 1000);
  EXPECT_EQ(array[0].coll, "items");
  EXPECT_EQ(array[0].field, "tags");
  // The size forecasts: bytes per element from the pushes, the size from the stored document.
  const auto size = forecasts(ForecastLimit::kDocumentBytes);
  ASSERT_EQ(size.size(), 1u);
  EXPECT_NEAR(size[0].bytes_per_second, 200, 10);
  EXPECT_EQ(forecasts(ForecastLimit::kMaxBsonSize).size(), 1u);
}

TEST_F(EngineForecastTest, NoForecastForOneObservationSlicedOrReplacedArrays) {
  at(0);
  insert(1, 3);  // seen once
  insert(2, 3);  // kept bounded by $slice
  insert(3, 3);  // replaced
  for (int i = 1; i <= 10; ++i) {
    at(i);
    push(2, R"({"$each": ["a"], "$slice": -5})");
    push(3);
  }
  auto array = forecasts(ForecastLimit::kArrayLength);
  ASSERT_EQ(array.size(), 1u);
  EXPECT_EQ(array[0].length, 13);
  run(R"({"update": "items", "$db": "shop", "updates": [{"q": {"_id": 3}, "u": {"tags": [1]}}]})");
  EXPECT_TRUE(engine->limit_forecasts().empty()) << "a replacement starts a new history";
  for (int i = 11; i <= 20; ++i) {
    at(i);
    push(3);
  }
  array = forecasts(ForecastLimit::kArrayLength);
  ASSERT_EQ(array.size(), 1u);
  EXPECT_EQ(array[0].length, 11);
}

// Database "a.b" with collection "c" and database "a" with collection "b.c" are two namespaces:
// the same _id in each is two tracked documents, each described with its own names.
TEST(DocumentTrackerForecastTest, NamesThatJoinToOneTextAreTwoNamespaces) {
  const std::vector<uint8_t> id_doc = {14, 0, 0, 0, 0x10, '_', 'i', 'd', 0, 7, 0, 0, 0, 0};
  codec::BsonElements id(id_doc.data(), static_cast<uint32_t>(id_doc.size()));
  ASSERT_TRUE(id.next());
  std::string first, second;
  DocumentTracker::make_key("a.b", "c", id, &first);
  DocumentTracker::make_key("a", "b.c", id, &second);
  EXPECT_NE(first, second);
  DocumentTracker t(100, 8);
  t.record(first, "tags", 3, false, 0, 1000);
  t.record(second, "tags", 5, false, 0, 1000);
  DocumentTracker::Push push;
  push.array_bound = 100;
  push.horizon = 1e9;
  for (uint32_t i = 1; i <= 3; ++i) {
    push.now = i;
    const auto grown_first = t.grow(first, "tags", 1, std::nullopt, &push);
    const auto grown_second = t.grow(second, "tags", 1, std::nullopt, &push);
    ASSERT_TRUE(grown_first && grown_second);
    EXPECT_EQ(grown_first->length, 3 + i);  // each document its own length
    EXPECT_EQ(grown_second->length, 5 + i);
  }
  std::set<std::pair<std::string, std::string>> names;
  for (const auto& g : t.growing_arrays(3)) names.emplace(g.db, g.coll);
  EXPECT_EQ(names, (std::set<std::pair<std::string, std::string>>{{"a.b", "c"}, {"a", "b.c"}}));
}

TEST(DocumentTrackerForecastTest, EntersTheHorizonOnce) {
  DocumentTracker t(100, 8);
  std::string key;  // as make_key writes it: db and collection as key parts, type, value
  base::append_key_part(key, "shop");
  base::append_key_part(key, "items");
  key += "\x10";
  key += "1";
  t.record(key, "tags", 0, false, 0, 1000);
  DocumentTracker::Push push;
  push.array_bound = 100;
  push.horizon = 50;
  int entered = 0;
  for (int i = 1; i <= 80; ++i) {
    push.now = i;  // 1 element/s: 100 - i seconds to go
    push.entered.reset();
    auto grown = t.grow(key, "tags", 1, std::nullopt, &push);
    ASSERT_TRUE(grown);
    if (push.entered) {
      ++entered;
      EXPECT_EQ(push.entered->limit, ForecastLimit::kArrayLength);
      EXPECT_LT(push.entered->eta_seconds, 50);
      EXPECT_GT(i, 45);
    }
  }
  EXPECT_EQ(entered, 1);
  const auto growing = t.growing_arrays(80);
  ASSERT_EQ(growing.size(), 1u);
  EXPECT_EQ(growing[0].db, "shop");
  EXPECT_EQ(growing[0].coll, "items");
  // {_id: "1"} as BSON: 4 + type + "_id\0" + the string's bytes + NUL.
  EXPECT_EQ(growing[0].id.size(), 11u);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
