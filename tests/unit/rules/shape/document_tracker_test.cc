#include "docguard/rules/document_tracker.h"

#include <gtest/gtest.h>

#include <string>

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

std::string key(int i) { return "db.c" + std::string(1, '\0') + "\x10" + std::to_string(i); }

TEST(DocumentTrackerTest, GrowsKnownPathsOnly) {
  DocumentTracker t(100, 8);
  t.record(key(1), "tags", 3);
  EXPECT_EQ(t.grow(key(1), "tags", 2, std::nullopt), 5u);
  EXPECT_EQ(t.grow(key(1), "tags", 10, 7u), 7u);  // $slice caps the length
  EXPECT_EQ(t.grow(key(1), "other", 1, std::nullopt), std::nullopt);
  EXPECT_EQ(t.grow(key(2), "tags", 1, std::nullopt), std::nullopt);
  t.record(key(1), "tags", 1);  // a later write replaces the length
  EXPECT_EQ(t.grow(key(1), "tags", 1, std::nullopt), 2u);
  EXPECT_EQ(t.size(), 1u);
}

TEST(DocumentTrackerTest, RemembersAtMostMaxFieldsPathsPerDocument) {
  DocumentTracker t(100, 2);
  t.record(key(1), "a", 1);
  t.record(key(1), "b", 1);
  t.record(key(1), "c", 1);
  EXPECT_EQ(t.grow(key(1), "a", 1, std::nullopt), 2u);
  EXPECT_EQ(t.grow(key(1), "b", 1, std::nullopt), 2u);
  EXPECT_EQ(t.grow(key(1), "c", 1, std::nullopt), std::nullopt);
  // A forgotten document's slot is reused without its old paths.
  t.forget(key(1));
  t.record(key(2), "z", 4);
  EXPECT_EQ(t.grow(key(2), "a", 1, std::nullopt), std::nullopt);
  EXPECT_EQ(t.grow(key(2), "z", 1, std::nullopt), 5u);
}

TEST(DocumentTrackerTest, EvictsTheLeastRecentlyUsedDocument) {
  DocumentTracker t(24, 8);
  t.record(key(0), "tags", 1);
  for (int i = 1; i < 2000; ++i) {
    t.record(key(i), "tags", 1);
    ASSERT_TRUE(t.grow(key(0), "tags", 0, std::nullopt)) << i;  // used: stays
  }
  EXPECT_EQ(t.size(), 24u);
  EXPECT_TRUE(t.grow(key(1999), "tags", 0, std::nullopt));
  EXPECT_FALSE(t.grow(key(1), "tags", 0, std::nullopt));  // long unused: gone

  DocumentTracker unused(24, 8);
  unused.record(key(0), "tags", 1);
  for (int i = 1; i < 2000; ++i) unused.record(key(i), "tags", 1);
  EXPECT_FALSE(unused.grow(key(0), "tags", 0, std::nullopt));
}

TEST(DocumentTrackerTest, ForgetsAndFindsAmongManyDocuments) {
  DocumentTracker t(100'000, 8);
  constexpr int kDocs = 20'000;
  for (int i = 0; i < kDocs; ++i) t.record(key(i), "tags", static_cast<uint32_t>(i));
  EXPECT_EQ(t.size(), static_cast<size_t>(kDocs));
  for (int i = 0; i < kDocs; i += 2) t.forget(key(i));
  t.forget(key(kDocs + 5));  // unknown: nothing happens
  EXPECT_EQ(t.size(), static_cast<size_t>(kDocs / 2));
  for (int i = 0; i < kDocs; ++i) {
    const auto length = t.grow(key(i), "tags", 0, std::nullopt);
    if (i % 2 == 0) {
      ASSERT_EQ(length, std::nullopt) << i;
    } else {
      ASSERT_EQ(length, static_cast<uint32_t>(i)) << i;
    }
  }
  for (int i = 0; i < kDocs; i += 2) t.record(key(i), "tags", 1);
  EXPECT_EQ(t.size(), static_cast<size_t>(kDocs));
  EXPECT_EQ(t.grow(key(4), "tags", 1, std::nullopt), 2u);
}

TEST(DocumentTrackerTest, LimitsShrinkAndZeroDisablesTracking) {
  DocumentTracker t(1000, 8);
  for (int i = 0; i < 1000; ++i) t.record(key(i), "tags", 1);
  t.set_limits(80, 8);
  EXPECT_EQ(t.size(), 80u);
  EXPECT_TRUE(t.grow(key(999), "tags", 0, std::nullopt));
  t.set_limits(0, 8);
  EXPECT_EQ(t.size(), 0u);
  t.record(key(1), "tags", 1);
  EXPECT_EQ(t.size(), 0u);
  t.set_limits(10, 8);
  t.record(key(1), "tags", 1);
  EXPECT_EQ(t.grow(key(1), "tags", 1, std::nullopt), 2u);
}

TEST(DocumentTracker, LengthsReadFromTheStoreAreMarked) {
  DocumentTracker t(100, 8);
  t.record(key(1), "tags", 3);
  EXPECT_FALSE(t.grow(key(1), "tags", 1, std::nullopt)->read_from_store);
  t.record(key(2), "tags", 950, true);
  const auto grown = t.grow(key(2), "tags", 100, std::nullopt);
  ASSERT_TRUE(grown);
  EXPECT_EQ(grown->length, 1050u);
  EXPECT_TRUE(grown->read_from_store);
  t.record(key(2), "tags", 5);  // a later write through docguard: still a stored document
  EXPECT_TRUE(t.grow(key(2), "tags", 1, std::nullopt)->read_from_store);
  t.forget(key(2));
  t.record(key(2), "tags", 5);
  EXPECT_FALSE(t.grow(key(2), "tags", 1, std::nullopt)->read_from_store);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
