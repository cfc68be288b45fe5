// Introspection's per-collection gauges take their lines from the exposition's series budget, as
// every per-namespace series does, and give them back when a collection is gone.
#include "docguard/proxy/introspection_metrics.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <sstream>
#include <string>
#include <vector>

namespace docguard::proxy {
namespace {

advisor::LiveAdvisor::CollectionFacts facts_of(const std::string& coll, uint64_t documents) {
  advisor::LiveAdvisor::CollectionFacts f;
  f.metadata.db = "shop";
  f.metadata.collection = coll;
  f.metadata.stats.known = true;
  f.metadata.stats.documents = documents;
  f.metadata.stats.size_bytes = documents * 100;
  return f;
}

size_t documents_series(prometheus::Registry& registry) {
  const std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
  std::istringstream in(text);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("docguard_collection_documents{")) ++n;
  }
  return n;
}

TEST(IntrospectionMetrics, CollectionGaugesStayInsideTheSeriesBudget) {
  prometheus::Registry registry;
  telemetry::SeriesBudget budget(5);  // room for two collections (two lines each)
  IntrospectionMetrics metrics(registry, budget);
  metrics.update_collections({facts_of("a", 1), facts_of("b", 2), facts_of("c", 3)});
  EXPECT_EQ(documents_series(registry), 2u);
  EXPECT_EQ(budget.used(), 4u);
  EXPECT_GE(budget.refused(), 1u);

  // "a" is gone: its lines go back at the end of that pass, and "c" takes them on the next.
  metrics.update_collections({facts_of("b", 2), facts_of("c", 3)});
  metrics.update_collections({facts_of("b", 2), facts_of("c", 3)});
  EXPECT_EQ(documents_series(registry), 2u);
  EXPECT_EQ(budget.used(), 4u);
  const std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
  EXPECT_NE(text.find(R"(docguard_collection_documents{collection="c",db="shop"} 3)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find(R"(collection="a")"), std::string::npos);
}

}  // namespace
}  // namespace docguard::proxy
