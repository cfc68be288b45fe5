#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/document_outline.h"
#include "test_messages.h"

namespace docguard::codec {
namespace {

using testing::bson_is_valid;
using testing::json;
using testing::view;

bool valid(const std::vector<uint8_t>& bytes, size_t* offset = nullptr) {
  return bson_structure_valid(BsonView{bytes.data(), static_cast<uint32_t>(bytes.size())}, offset);
}

std::vector<uint8_t> bytes_of(const testing::BsonPtr& b) {
  return {bson_get_data(b.get()), bson_get_data(b.get()) + b->len};
}

TEST(BsonStructure, AcceptsEveryTypeLibbsonAccepts) {
  auto doc = json(
      R"json({"d": 1.5, "s": "str", "o": {"a": [1, {"b": null}]}, "bin": {"$binary": {"base64": "AAEC", "subType": "00"}},
                      "u": {"$undefined": true}, "oid": {"$oid": "650000000000000000000000"}, "t": true,
                      "dt": {"$date": 1}, "n": null, "re": {"$regularExpression": {"pattern": "a.*", "options": "i"}},
                      "ptr": {"$dbPointer": {"$ref": "c", "$id": {"$oid": "650000000000000000000000"}}},
                      "code": {"$code": "f()"}, "sym": {"$symbol": "x"},
                      "cws": {"$code": "g()", "$scope": {"x": 1}}, "i": 1, "ts": {"$timestamp": {"t": 1, "i": 2}},
                      "l": {"$numberLong": "5"}, "dec": {"$numberDecimal": "1.1"}, "max": {"$maxKey": 1}, "min": {"$minKey": 1}})json");
  EXPECT_TRUE(bson_is_valid(view(doc)));
  EXPECT_TRUE(valid(bytes_of(doc)));
}

TEST(BsonStructure, RejectsCorruptElements) {
  auto doc = json(R"({"a": 1, "s": "hello", "o": {"x": 1}, "t": true})");
  const auto good = bytes_of(doc);
  ASSERT_TRUE(valid(good));
  auto at = [&](const char* key_with_type, size_t size) {
    auto it = std::search(good.begin(), good.end(), key_with_type, key_with_type + size);
    return static_cast<size_t>(it - good.begin());
  };
  {
    auto b = good;  // unknown element type
    b[at(
        "\x10"
        "a",
        2)] = 0x42;
    size_t off = 99;
    EXPECT_FALSE(valid(b, &off));
    EXPECT_EQ(off, 4u);
  }
  {
    auto b = good;  // string length overruns the document
    store_le32(b.data() + at("\x02s", 2) + 3, 1000);
    EXPECT_FALSE(valid(b));
  }
  {
    auto b = good;  // string not NUL-terminated
    b[at("hello", 5) + 5] = 'x';
    EXPECT_FALSE(valid(b));
  }
  {
    auto b = good;  // embedded document length overruns its parent
    store_le32(b.data() + at("\x03o", 2) + 3, 300);
    EXPECT_FALSE(valid(b));
  }
  {
    auto b = good;  // boolean that is neither 0 nor 1
    b[at("\x08t", 2) + 3] = 7;
    EXPECT_FALSE(valid(b));
  }
  {
    auto b = good;  // outer length disagrees with the view
    store_le32(b.data(), static_cast<int32_t>(b.size() - 1));
    EXPECT_FALSE(valid(b));
  }
}

TEST(BsonStructure, FindsTheFirstWatchedTopLevelKey) {
  auto doc = json(R"({"a": {"ops": 1}, "nsInfo": 1, "op": 2, "ops": 3, "opsX": 4})");
  const auto bytes = bytes_of(doc);
  const BsonView v{bytes.data(), static_cast<uint32_t>(bytes.size())};
  size_t offset = 0;
  std::string_view found = "unset";
  // Embedded keys, prefixes and longer keys do not count; top-level keys in document order do.
  const std::string_view ops[] = {"ops"};
  EXPECT_TRUE(bson_structure_valid(v, &offset, ops, &found));
  EXPECT_EQ(found, "ops");
  const std::string_view both[] = {"ops", "nsInfo"};
  EXPECT_TRUE(bson_structure_valid(v, &offset, both, &found));
  EXPECT_EQ(found, "nsInfo");
  const std::string_view none[] = {"o", "opsXY", "nsinfo"};
  EXPECT_TRUE(bson_structure_valid(v, &offset, none, &found));
  EXPECT_TRUE(found.empty());
  // A corrupt document is invalid with the same offset as without watched keys.
  auto corrupt = bytes;
  store_le32(corrupt.data() + 4 + 1 + 2, 300);  // the embedded document's length
  size_t plain_offset = 0;
  EXPECT_FALSE(valid(corrupt, &plain_offset));
  const BsonView cv{corrupt.data(), static_cast<uint32_t>(corrupt.size())};
  EXPECT_FALSE(bson_structure_valid(cv, &offset, ops, &found));
  EXPECT_EQ(offset, plain_offset);
  EXPECT_FALSE(bson_structure_valid(BsonView{}, &offset, ops, &found));
}

TEST(BsonStructure, NotesWhereTheTopLevelElementsAndTheirValuesStart) {
  auto doc = json(R"({"a": {"b": 1}, "cd": "x", "e": [1, 2]})");
  const auto bytes = bytes_of(doc);
  const BsonView v{bytes.data(), static_cast<uint32_t>(bytes.size())};
  size_t offset = 0;
  TopLevelElements top;
  ASSERT_TRUE(bson_structure_valid(v, &offset, &top));
  ASSERT_TRUE(top.complete);
  ASSERT_EQ(top.count, 3u);  // embedded elements are not noted
  EXPECT_EQ(top.entries[0].element, 4u);
  EXPECT_EQ(top.entries[0].value, 4u + 1 + 2);  // type, "a", NUL
  EXPECT_EQ(bytes[top.entries[1].element], 0x02);
  EXPECT_EQ(top.entries[1].value - top.entries[1].element, 1u + 3);  // type, "cd", NUL
  EXPECT_EQ(bytes[top.entries[2].element], 0x04);
  // The same with watched keys; and nothing complete of a corrupt document or of one of more
  // elements than are kept.
  std::string_view found;
  const std::string_view keys[] = {"cd"};
  TopLevelElements watched_top;
  ASSERT_TRUE(bson_structure_valid(v, &offset, keys, &found, &watched_top));
  EXPECT_EQ(found, "cd");
  EXPECT_TRUE(watched_top.complete);
  EXPECT_EQ(watched_top.count, 3u);
  EXPECT_EQ(watched_top.entries[2].value, top.entries[2].value);
  auto corrupt = bytes;
  store_le32(corrupt.data() + 4 + 1 + 2, 300);
  EXPECT_FALSE(bson_structure_valid(BsonView{corrupt.data(), static_cast<uint32_t>(corrupt.size())},
                                    &offset, &top));
  EXPECT_FALSE(top.complete);
  std::string many = "{";
  for (uint32_t i = 0; i <= TopLevelElements::kCapacity; ++i) {
    many += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": 1";
  }
  many += "}";
  const auto many_bytes = bytes_of(json(many.c_str()));
  EXPECT_TRUE(bson_structure_valid(
      BsonView{many_bytes.data(), static_cast<uint32_t>(many_bytes.size())}, &offset, &top));
  EXPECT_FALSE(top.complete);
  EXPECT_EQ(top.count, TopLevelElements::kCapacity);
}

TEST(BsonStructure, RejectsKeysThatOnlyEndAtTheDocumentsOwnNul) {
  // The key scan stops at the document's terminating NUL, which ends no key or regex.
  size_t off = 99;
  EXPECT_FALSE(valid({8, 0, 0, 0, 0x10, 'a', 'b', 0}, &off));  // int32 "ab" with no NUL of its own
  EXPECT_EQ(off, 4u);
  EXPECT_FALSE(valid({6, 0, 0, 0, 0x0A, 0}));  // null with no key at all
  // A regex whose options end at the terminator (libbson lets this pass; the walk must not).
  EXPECT_FALSE(valid({10, 0, 0, 0, 0x0B, 'r', 0, 'a', 0, 0}));
  EXPECT_TRUE(valid({11, 0, 0, 0, 0x0B, 'r', 0, 'a', 0, 0, 0}));
  // An embedded document whose key runs to its own terminator, inside a parent that goes on.
  std::vector<uint8_t> parent = {0, 0, 0,    0,   0x03, 'o',  0,   7, 0,
                                 0, 0, 0x0A, 'x', 0,    0x0A, 'n', 0, 0};
  store_le32(parent.data(), static_cast<int32_t>(parent.size()));
  EXPECT_FALSE(valid(parent, &off));
  EXPECT_EQ(off, 7u + 4u);
  // With its own terminator after "x": {"o": {"x": null}, "n": null}.
  parent.insert(parent.begin() + 14, 0);
  parent[7] = 8;
  store_le32(parent.data(), static_cast<int32_t>(parent.size()));
  EXPECT_TRUE(valid(parent));
}

// {"a": {"a": ... {"a": 1}}} with `levels` embedded documents.
std::vector<uint8_t> nested(int levels) {
  std::vector<uint8_t> doc = {12, 0, 0, 0, 0x10, 'a', 0, 1, 0, 0, 0, 0};
  for (int i = 0; i < levels; ++i) {
    std::vector<uint8_t> outer = {0, 0, 0, 0, 0x03, 'a', 0};
    outer.insert(outer.end(), doc.begin(), doc.end());
    outer.push_back(0);
    store_le32(outer.data(), static_cast<int32_t>(outer.size()));
    doc = std::move(outer);
  }
  return doc;
}

TEST(BsonStructure, OutlinesTheEmbeddedDocumentsAndArraysAsItValidates) {
  // Containers in the order met, a container before what it holds; `end` closes each subtree.
  const auto bytes = bytes_of(json(
      R"json({"_id": 1, "tags": [1, 2, 3], "v": [{"t": [1]}, {"t": []}], "d": {"w": 1},
              "cws": {"$code": "g()", "$scope": {"x": [1]}}})json"));
  const BsonView v{bytes.data(), static_cast<uint32_t>(bytes.size())};
  size_t offset = 0;
  DocumentOutline outline;
  ASSERT_TRUE(bson_structure_valid(v, &offset, &outline));
  EXPECT_TRUE(outline.complete);
  EXPECT_TRUE(outline.describes(v));
  EXPECT_TRUE(outline.id_first);
  EXPECT_EQ(outline.depth, 4u);  // the document, v, v's element, t
  ASSERT_EQ(outline.count, 7u);  // a code with scope's scope is not a container of the document
  auto key = [&](uint32_t i) {
    const auto& c = outline.containers[i];
    return std::string(reinterpret_cast<const char*>(bytes.data()) + c.element + 1, c.key_size);
  };
  const std::vector<std::string> keys = {"tags", "v", "0", "t", "1", "t", "d"};
  const std::vector<uint32_t> lengths = {3, 2, 1, 1, 1, 0, 1};
  const std::vector<uint32_t> ends = {1, 6, 4, 4, 6, 6, 7};
  const std::vector<bool> arrays = {true, true, false, true, false, true, false};
  for (uint32_t i = 0; i < outline.count; ++i) {
    EXPECT_EQ(key(i), keys[i]) << i;
    EXPECT_EQ(outline.containers[i].length, lengths[i]) << i;
    EXPECT_EQ(outline.containers[i].end, ends[i]) << i;
    EXPECT_EQ(outline.containers[i].is_array, arrays[i]) << i;
  }
  // A copy has what was set; another document's bytes are not described.
  DocumentOutline copy;
  outline.copy_to(copy);
  EXPECT_TRUE(copy.describes(v));
  EXPECT_EQ(copy.containers[6].end, 7u);
  EXPECT_FALSE(copy.describes(BsonView{bytes.data(), v.size - 1}));
  // Not complete: a corrupt document, one of more containers than are noted; no _id first.
  auto corrupt = bytes;
  corrupt[corrupt.size() - 2] = 0x7F;
  EXPECT_FALSE(bson_structure_valid(BsonView{corrupt.data(), v.size}, &offset, &outline));
  EXPECT_FALSE(outline.complete);
  std::string many = R"({"a": 1, "_id": 2, "m": [)";
  for (uint32_t i = 0; i < DocumentOutline::kCapacity; ++i) many += i ? ", []" : "[]";
  const auto many_bytes = bytes_of(json((many + "]}").c_str()));
  const BsonView m{many_bytes.data(), static_cast<uint32_t>(many_bytes.size())};
  EXPECT_TRUE(bson_structure_valid(m, &offset, &outline));
  EXPECT_FALSE(outline.complete);
  EXPECT_FALSE(outline.describes(m));
  EXPECT_FALSE(outline.id_first);
  EXPECT_EQ(outline.count, DocumentOutline::kCapacity + 1);
}

TEST(BsonStructure, LimitsDepth) {
  EXPECT_TRUE(valid(nested(150)));
  EXPECT_TRUE(valid(nested(kMaxBsonDepth)));
  EXPECT_FALSE(valid(nested(kMaxBsonDepth + 1)));
}

}  // namespace
}  // namespace docguard::codec
