// The namespace registry: one statistics object per namespace, the overflow bucket past the bound,
// and each thread's last answer never mistaken for another registry's.
#include "docguard/rules/namespace_registry.h"

#include <gtest/gtest.h>

#include <string>

namespace docguard::rules {
namespace {
namespace DOCGUARD_UNITY_ID {

TEST(NamespaceRegistry, ANamespaceKeepsItsStatistics) {
  NamespaceRegistry registry;
  CollectionStats* orders = registry.find_or_add("shop", "orders", 10);
  EXPECT_EQ(orders, registry.find_or_add("shop", "orders", 10));
  EXPECT_NE(orders, registry.find_or_add("shop", "items", 10));
  // Looked up again after another name: the map's answer, not only the thread's last one.
  EXPECT_EQ(orders, registry.find_or_add("shop", "orders", 10));
  EXPECT_EQ(orders->db, "shop");
  EXPECT_EQ(orders->coll, "orders");
}

TEST(NamespaceRegistry, PastTheBoundNewNamespacesShareTheOverflow) {
  NamespaceRegistry registry;
  CollectionStats* first = registry.find_or_add("a", "one", 1);
  CollectionStats* second = registry.find_or_add("a", "two", 1);
  EXPECT_FALSE(registry.is_overflow(first));
  EXPECT_TRUE(registry.is_overflow(second));
  EXPECT_TRUE(registry.is_overflow(registry.find_or_add("b", "three", 1)));
  // A known namespace keeps its own under a lowered bound; a raised bound gives the next its own.
  EXPECT_EQ(first, registry.find_or_add("a", "one", 0));
  EXPECT_FALSE(registry.is_overflow(registry.find_or_add("a", "two", 2)));
}

TEST(NamespaceRegistry, AThreadsLastAnswerIsPerRegistry) {
  NamespaceRegistry one;
  NamespaceRegistry two;
  CollectionStats* in_one = one.find_or_add("shop", "orders", 10);
  CollectionStats* in_two = two.find_or_add("shop", "orders", 10);
  EXPECT_NE(in_one, in_two);
  EXPECT_EQ(in_one, one.find_or_add("shop", "orders", 10));
}

TEST(NamespaceRegistry, AllListsEveryNamespaceAndTheOverflowLast) {
  NamespaceRegistry registry;
  registry.find_or_add("shop", "orders", 10);
  registry.find_or_add("shop", "items", 10);
  const auto all = registry.all();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_TRUE(registry.is_overflow(all.back()));
  int named = 0;
  registry.for_each([&](const std::string& ns, const CollectionStats& stats) {
    EXPECT_EQ(ns, stats.db + "." + stats.coll);
    ++named;
  });
  EXPECT_EQ(named, 2);
}

// A '.' may be in either name as a client sends them: db "a.b" with collection "c" and db "a"
// with collection "b.c" join to the same "a.b.c" yet are two namespaces, each with its own
// statistics and labels, whichever came first and whether or not a thread looked one up last.
TEST(NamespaceRegistry, NamesThatJoinToOneTextAreTwoNamespaces) {
  for (const bool db_with_dot_first : {true, false}) {
    NamespaceRegistry registry;
    const auto dotted_db = [&] { return registry.find_or_add("a.b", "c", 10); };
    const auto dotted_coll = [&] { return registry.find_or_add("a", "b.c", 10); };
    CollectionStats* first = db_with_dot_first ? dotted_db() : dotted_coll();
    CollectionStats* second = db_with_dot_first ? dotted_coll() : dotted_db();
    ASSERT_NE(first, second);
    EXPECT_FALSE(registry.is_overflow(first));
    EXPECT_FALSE(registry.is_overflow(second));
    CollectionStats* in_db = dotted_db();
    CollectionStats* in_coll = dotted_coll();
    EXPECT_EQ(in_db->db, "a.b");
    EXPECT_EQ(in_db->coll, "c");
    EXPECT_EQ(in_coll->db, "a");
    EXPECT_EQ(in_coll->coll, "b.c");
    EXPECT_NE(in_db->labels.id, in_coll->labels.id);
    // Asked again right after itself (the thread's last lookup) and after the other one.
    EXPECT_EQ(dotted_coll(), in_coll);
    EXPECT_EQ(dotted_db(), in_db);
    EXPECT_EQ(dotted_db(), in_db);
  }
}

// A thread's last lookup is its registry's: two registries used in turn on one thread (two
// engines in one process) each answer with their own statistics.
TEST(NamespaceRegistry, TwoRegistriesUsedInTurnOnOneThreadKeepTheirOwnStatistics) {
  NamespaceRegistry first;
  NamespaceRegistry second;
  CollectionStats* a = first.find_or_add("shop", "orders", 10);
  CollectionStats* b = second.find_or_add("shop", "orders", 10);
  EXPECT_NE(a, b);
  EXPECT_EQ(first.find_or_add("shop", "orders", 10), a);
  EXPECT_EQ(second.find_or_add("shop", "orders", 10), b);
  EXPECT_EQ(second.find_or_add("shop", "orders", 10), b);
}

// A field path's statistics: the last path asked for is answered first, yet every path keeps its
// own entry, and past the bound new paths share "_other" while known ones keep theirs.
TEST(NamespaceRegistry, EachArrayPathKeepsItsOwnStatistics) {
  NamespaceRegistry registry;
  CollectionStats& stats = *registry.find_or_add("shop", "orders", 10);
  auto& tags = stats.field("tags", 2);
  EXPECT_EQ(&tags, &stats.field("tags", 2));
  auto& items = stats.field("items", 2);
  EXPECT_NE(&tags, &items);
  EXPECT_EQ(&tags, &stats.field("tags", 2));
  EXPECT_EQ(&items, &stats.field("items", 2));
  auto& other = stats.field("lines", 2);
  EXPECT_EQ(other.first, "_other");
  EXPECT_EQ(&other, &stats.field("notes", 2));
  EXPECT_EQ(&tags, &stats.field("tags", 2));
  // A path that is literally "_other" after the overflow was the last answer: the same entry.
  EXPECT_EQ(&other, &stats.field("_other", 2));
  EXPECT_EQ(stats.fields.size(), 3u);
  // Raised bound: the next new path gets its own, even right after the overflow's answer.
  EXPECT_EQ(&other, &stats.field("lines", 2));
  EXPECT_EQ(stats.field("lines", 4).first, "lines");
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::rules
