#include <cstring>

#include "docguard/advisor/log_histogram.h"
#include "test_documents.h"

namespace docguard::advisor {
namespace {
namespace DOCGUARD_UNITY_ID {

using test_documents::document_with_array;
using test_documents::feed;

TEST(LogHistogram, BucketsCoverEveryValueInOrder) {
  for (uint64_t v : {0ull, 1ull, 15ull, 16ull, 17ull, 100ull, 6000ull, 1ull << 40}) {
    const int b = LogHistogram::bucket_of(v);
    EXPECT_LE(LogHistogram::bucket_low(b), v);
    EXPECT_GE(LogHistogram::bucket_high(b), v);
  }
  LogHistogram h;
  for (int i = 1; i <= 100; ++i) h.add(static_cast<uint64_t>(i));
  EXPECT_EQ(h.max(), 100u);
  EXPECT_NEAR(static_cast<double>(h.quantile(0.5)), 50, 6);
  EXPECT_NEAR(static_cast<double>(h.quantile(0.99)), 99, 8);
}

TEST(CollectionProfile, RecordsPathsTypesArraysAndReferences) {
  AdvisorSettings settings;
  CollectionProfile p("shop", "orders", settings);
  for (int i = 0; i < 10; ++i) {
    bson_t* doc = document_with_array(i, "items", i);
    BSON_APPEND_INT32(doc, "customerId", i % 2);
    feed(p, doc);
  }
  EXPECT_EQ(p.documents(), 10u);
  const FieldStats* items = p.field("items");
  ASSERT_NE(items, nullptr);
  ASSERT_GE(items->array, 0);
  EXPECT_EQ(p.arrays()[items->array].lengths.max(), 9u);
  EXPECT_EQ(p.arrays()[items->array].longest.front().id, "9");
  const FieldStats* n = p.field("items.n");
  ASSERT_NE(n, nullptr);
  EXPECT_TRUE(n->inside_array);
  EXPECT_EQ(n->documents, 9u);  // the first document's array is empty
  EXPECT_EQ(n->occurrences, 45u);
  const FieldStats* customer = p.field("customerId");
  ASSERT_NE(customer, nullptr);
  EXPECT_TRUE(customer->reference);
  ASSERT_TRUE(customer->distinct);
  EXPECT_EQ(customer->distinct->count(), 2u);
  EXPECT_EQ(p.max_depth(), 3u);
}

// The same document sampled again (a replacement, an upsert) changes no list of longest
// documents; a longer copy of it raises its entry, another document still enters.
TEST(CollectionProfile, ADocumentSampledAgainIsListedOnce) {
  AdvisorSettings settings;
  CollectionProfile p("shop", "orders", settings);
  for (int i = 0; i < 3; ++i) feed(p, document_with_array(7, "items", 4));
  ASSERT_EQ(p.largest().size(), 1u);
  EXPECT_EQ(p.largest().front().id, "7");
  const FieldStats* items = p.field("items");
  ASSERT_NE(items, nullptr);
  const auto& longest = p.arrays()[items->array].longest;
  ASSERT_EQ(longest.size(), 1u);
  EXPECT_EQ(longest.front().value, 4u);
  feed(p, document_with_array(7, "items", 6));
  ASSERT_EQ(longest.size(), 1u);
  EXPECT_EQ(longest.front().value, 6u);
  feed(p, document_with_array(8, "items", 2));
  ASSERT_EQ(longest.size(), 2u);
  EXPECT_EQ(longest.back().id, "8");
  EXPECT_EQ(p.largest().size(), 2u);
}

TEST(CollectionProfile, PathsAreBoundedAndOverflowCounted) {
  AdvisorSettings settings;
  settings.max_field_paths = 10;
  CollectionProfile p("shop", "wide", settings);
  bson_t* doc = bson_new();
  for (int i = 0; i < 50; ++i) BSON_APPEND_INT32(doc, ("f" + std::to_string(i)).c_str(), i);
  feed(p, doc);
  EXPECT_EQ(p.fields().size(), 10u);
  EXPECT_EQ(p.overflow_paths(), 40u);
}

TEST(CollectionProfile, CorruptDocumentsAreRefusedNotRead) {
  AdvisorSettings settings;
  CollectionProfile p("shop", "bad", settings);
  bson_t* doc = document_with_array(1, "items", 3);
  std::vector<uint8_t> bytes(bson_get_data(doc), bson_get_data(doc) + doc->len);
  bson_destroy(doc);
  for (size_t cut = 5; cut < bytes.size(); ++cut) {
    // Claim a shorter document: every element crossing the new end must be refused.
    std::vector<uint8_t> copy(bytes.begin(), bytes.begin() + static_cast<long>(cut));
    const uint32_t length = static_cast<uint32_t>(cut);
    std::memcpy(copy.data(), &length, 4);
    copy.back() = 0;
    (void)p.add_document(copy.data(), length);  // must not crash or read past `cut`
  }
  // A fixed-size value (a double) cut short by the document's end: refused, not read past.
  const uint8_t short_double[] = {11, 0, 0, 0, 0x01, 'a', 0, 1, 2, 3, 0};
  EXPECT_FALSE(p.add_document(short_double, sizeof short_double));
  bytes[4] = 0x42;  // an unknown element type
  const auto walked = p.add_document(bytes.data(), static_cast<uint32_t>(bytes.size()));
  ASSERT_FALSE(walked);
  EXPECT_NE(walked.error().message.find("corrupt"), std::string::npos);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::advisor
