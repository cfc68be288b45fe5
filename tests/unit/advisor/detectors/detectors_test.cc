// Each detector fires on its pattern and stays quiet on the well-designed counterpart.
#include "docguard/advisor/detectors.h"

#include <memory>

#include "test_documents.h"

namespace docguard::advisor {
namespace {
namespace DOCGUARD_UNITY_ID {

using test_documents::count_kind;
using test_documents::document_with_array;
using test_documents::feed;
using test_documents::metadata_with_indexes;

const AdvisorSettings kSettings;

std::vector<Finding> detect(const CollectionProfile& profile) {
  return run_offline_detectors({&profile}, kSettings);
}

TEST(LargeArrayDetector, FiresOnAnArrayPastTheCompassBound) {
  CollectionProfile p("shop", "posts", kSettings);
  for (int i = 0; i < 50; ++i) feed(p, document_with_array(i, "comments", 5));
  feed(p, document_with_array(99, "comments", 300));
  const auto findings = detect(p);
  ASSERT_EQ(count_kind(findings, Finding::Kind::kLargeArray, "comments"), 1);
  const Finding& f = *std::find_if(findings.begin(), findings.end(), [](const Finding& f) {
    return f.kind == Finding::Kind::kLargeArray;
  });
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_NE(f.evidence.find("300 elements"), std::string::npos) << f.evidence;
  EXPECT_NE(f.evidence.find("_id 99"), std::string::npos) << f.evidence;
  EXPECT_NE(f.suggestion.find("postId"), std::string::npos) << f.suggestion;
}

TEST(LargeArrayDetector, QuietOnABoundedArray) {
  CollectionProfile p("shop", "posts", kSettings);
  for (int i = 0; i < 100; ++i) feed(p, document_with_array(i, "comments", i % 50));
  EXPECT_EQ(count_kind(detect(p), Finding::Kind::kLargeArray), 0);
}

TEST(OutlierDetector, FiresWhenAFewArraysAreFarLongerThanTheP99) {
  CollectionProfile p("shop", "products", kSettings);
  for (int i = 0; i < 200; ++i) feed(p, document_with_array(i, "reviews", i % 21));
  feed(p, document_with_array(500, "reviews", 3000));
  const auto findings = detect(p);
  ASSERT_EQ(count_kind(findings, Finding::Kind::kOutlier, "reviews"), 1);
  for (const Finding& f : findings) {
    if (f.kind != Finding::Kind::kOutlier) continue;
    EXPECT_NE(f.suggestion.find("has_overflow"), std::string::npos);
    EXPECT_NE(f.evidence.find("500 (3,000)"), std::string::npos) << f.evidence;
  }
}

TEST(OutlierDetector, QuietWhenLengthsAreEvenlySpread) {
  CollectionProfile p("shop", "products", kSettings);
  for (int i = 0; i < 200; ++i) feed(p, document_with_array(i, "reviews", 100 + i % 100));
  EXPECT_EQ(count_kind(detect(p), Finding::Kind::kOutlier), 0);
}

bson_t* reading(int id, int sensor, int64_t millis) {
  bson_t* doc = bson_new();
  BSON_APPEND_INT32(doc, "_id", id);
  BSON_APPEND_UTF8(doc, "sensorId", ("s" + std::to_string(sensor)).c_str());
  BSON_APPEND_DATE_TIME(doc, "ts", millis);
  BSON_APPEND_DOUBLE(doc, "value", 20.5);
  return doc;
}

TEST(BucketDetector, FiresOnManyTinyReadingsOfAFewKeys) {
  CollectionProfile p("iot", "events", kSettings);
  for (int i = 0; i < 3000; ++i) feed(p, reading(i, i % 10, 1700000000000 + i * 6000LL));
  const auto findings = detect(p);
  ASSERT_EQ(count_kind(findings, Finding::Kind::kBucket, "sensorId"), 1);
  for (const Finding& f : findings) {
    if (f.kind != Finding::Kind::kBucket) continue;
    EXPECT_NE(f.suggestion.find("`ts`"), std::string::npos) << f.suggestion;
    EXPECT_NE(f.evidence.find("10 distinct `sensorId`"), std::string::npos) << f.evidence;
  }
}

TEST(BucketDetector, QuietOnABucketedSeries) {
  CollectionProfile p("iot", "events", kSettings);
  for (int b = 0; b < 1500; ++b) {
    bson_t* doc = document_with_array(b, "readings", 60);
    BSON_APPEND_UTF8(doc, "sensorId", ("s" + std::to_string(b % 10)).c_str());
    BSON_APPEND_DATE_TIME(doc, "start", 1700000000000 + b * 3600000LL);
    feed(p, doc);
  }
  EXPECT_EQ(count_kind(detect(p), Finding::Kind::kBucket), 0);
}

TEST(BloatedDocumentDetector, FiresPastTwoMegabytesAndNamesTheHeavyField) {
  CollectionProfile p("cms", "pages", kSettings);
  const std::string html(2'500'000, 'x');
  bson_t* big = bson_new();
  BSON_APPEND_UTF8(big, "_id", "archive");
  BSON_APPEND_UTF8(big, "html", html.c_str());
  feed(p, big);
  const auto findings = detect(p);
  ASSERT_EQ(count_kind(findings, Finding::Kind::kBloatedDocuments, "html"), 1);
}

TEST(BloatedDocumentDetector, QuietOnSmallDocuments) {
  CollectionProfile p("cms", "pages", kSettings);
  for (int i = 0; i < 10; ++i) feed(p, document_with_array(i, "blocks", 20));
  EXPECT_EQ(count_kind(detect(p), Finding::Kind::kBloatedDocuments), 0);
}

TEST(AttributeDetector, FiresOnManySparseFieldNames) {
  CollectionProfile p("shop", "catalog", kSettings);
  for (int i = 0; i < 200; ++i) {
    bson_t* doc = bson_new();
    BSON_APPEND_INT32(doc, "_id", i);
    for (int k = 0; k < 5; ++k)
      BSON_APPEND_INT32(doc, ("attr_" + std::to_string((i * 5 + k) % 60)).c_str(), k);
    feed(p, doc);
  }
  ASSERT_EQ(count_kind(detect(p), Finding::Kind::kAttribute, "attr_*"), 1);
}

TEST(AttributeDetector, QuietOnTheAttributePatternItself) {
  CollectionProfile p("shop", "catalog", kSettings);
  for (int i = 0; i < 200; ++i) feed(p, document_with_array(i, "attributes", 5));
  EXPECT_EQ(count_kind(detect(p), Finding::Kind::kAttribute), 0);
}

bson_t* review(int id, int product) {
  bson_t* doc = bson_new();
  BSON_APPEND_INT32(doc, "_id", id);
  BSON_APPEND_INT32(doc, "productId", product);
  BSON_APPEND_UTF8(doc, "text", "fine");
  return doc;
}

TEST(UnindexedReferenceDetector, FiresWithoutAnIndexOnTheReference) {
  CollectionProfile p("shop", "reviews", kSettings);
  p.set_metadata(metadata_with_indexes("shop", "reviews", {}));
  for (int i = 0; i < 10; ++i) feed(p, review(i, i % 3));
  ASSERT_EQ(count_kind(detect(p), Finding::Kind::kUnindexedReference, "productId"), 1);
}

TEST(UnindexedReferenceDetector, QuietWhenAnIndexStartsWithTheReference) {
  for (const auto& keys :
       std::vector<std::vector<std::string>>{{"productId"}, {"productId", "ts"}}) {
    CollectionProfile p("shop", "reviews", kSettings);
    p.set_metadata(metadata_with_indexes("shop", "reviews", {keys}));
    for (int i = 0; i < 10; ++i) feed(p, review(i, i % 3));
    EXPECT_EQ(count_kind(detect(p), Finding::Kind::kUnindexedReference), 0);
  }
}

TEST(UnindexedReferenceDetector, QuietWhenTheIndexesAreUnknown) {
  CollectionProfile p("shop", "reviews", kSettings);
  for (int i = 0; i < 10; ++i) feed(p, review(i, i % 3));
  EXPECT_EQ(count_kind(detect(p), Finding::Kind::kUnindexedReference), 0);
}

TEST(TooManyIndexesDetector, FiresPastTenAndBlocksPastThirty) {
  std::vector<std::vector<std::string>> keys;
  for (int i = 0; i < 11; ++i) keys.push_back({"f" + std::to_string(i)});
  CollectionProfile p("shop", "wide", kSettings);
  p.set_metadata(metadata_with_indexes("shop", "wide", keys));
  auto findings = detect(p);
  ASSERT_EQ(count_kind(findings, Finding::Kind::kTooManyIndexes), 1);
  for (int i = 11; i < 40; ++i) keys.push_back({"f" + std::to_string(i)});
  p.set_metadata(metadata_with_indexes("shop", "wide", keys));
  findings = detect(p);
  for (const Finding& f : findings) {
    if (f.kind == Finding::Kind::kTooManyIndexes) {
      EXPECT_EQ(f.severity, Severity::kBlock);
    }
  }
  CollectionProfile few("shop", "narrow", kSettings);
  few.set_metadata(metadata_with_indexes("shop", "narrow", {{"a"}, {"b"}}));
  EXPECT_EQ(count_kind(detect(few), Finding::Kind::kTooManyIndexes), 0);
}

TEST(TooManyCollectionsDetector, FiresPastAHundredInOneDatabase) {
  std::vector<std::unique_ptr<CollectionProfile>> owned;
  std::vector<const CollectionProfile*> profiles;
  for (int i = 0; i < 101; ++i) {
    owned.push_back(
        std::make_unique<CollectionProfile>("tenants", "c" + std::to_string(i), kSettings));
    profiles.push_back(owned.back().get());
  }
  EXPECT_EQ(
      count_kind(run_offline_detectors(profiles, kSettings), Finding::Kind::kTooManyCollections),
      1);
  profiles.resize(5);
  EXPECT_EQ(
      count_kind(run_offline_detectors(profiles, kSettings), Finding::Kind::kTooManyCollections),
      0);
}

// {n: {n: ... {leaf: 1}}} with `levels` documents below the top one.
void append_nested(bson_t* parent, int levels) {
  if (levels == 0) {
    BSON_APPEND_INT32(parent, "leaf", 1);
    return;
  }
  bson_t child;
  bson_append_document_begin(parent, "n", -1, &child);
  append_nested(&child, levels - 1);
  bson_append_document_end(parent, &child);
}

bson_t* nested(int depth) {
  bson_t* doc = bson_new();
  BSON_APPEND_INT32(doc, "_id", depth);
  append_nested(doc, depth - 1);
  return doc;
}

TEST(DeepNestingDetector, FiresPastTheBound) {
  CollectionProfile p("cms", "trees", kSettings);
  feed(p, nested(25));
  EXPECT_EQ(p.max_depth(), 25u);
  EXPECT_EQ(count_kind(detect(p), Finding::Kind::kDeepNesting, "n"), 1);
}

TEST(DeepNestingDetector, QuietOnShallowDocuments) {
  CollectionProfile p("cms", "trees", kSettings);
  feed(p, nested(5));
  EXPECT_EQ(count_kind(detect(p), Finding::Kind::kDeepNesting), 0);
}

TEST(MissingValidatorDetector, InfoWithoutValidatorQuietWithOne) {
  CollectionProfile p("shop", "orders", kSettings);
  CollectionMetadata m = metadata_with_indexes("shop", "orders", {});
  p.set_metadata(m);
  auto findings = detect(p);
  ASSERT_EQ(count_kind(findings, Finding::Kind::kNoValidator), 1);
  EXPECT_EQ(findings.front().severity, Severity::kInfo);
  m.has_validator = true;
  p.set_metadata(m);
  EXPECT_EQ(count_kind(detect(p), Finding::Kind::kNoValidator), 0);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::advisor
