// Collection metadata from BSON: the index documents and options shared with metadata.json, and
// the cluster's listCollections, listIndexes, statistics and $indexStats replies.
#include "docguard/advisor/cluster_metadata.h"

#include <optional>
#include <string_view>

#include "docguard/advisor/catalog_documents.h"
#include "docguard/codec/bson_elements.h"

namespace docguard::advisor {
namespace {

uint64_t non_negative(const codec::BsonElements& it) {
  const int64_t value = it.as_int64();
  return value > 0 ? static_cast<uint64_t>(value) : 0;
}

// The document's elements; an error when the bytes are not framed as a document.
base::Expected<void> init_document(BsonBytes bytes, codec::BsonElements* it, const char* what) {
  const auto size = static_cast<uint32_t>(bytes.size());
  if (bytes.empty() || !framed_document(bytes.data(), size)) {
    return base::bad_input(std::string(what) + " is not a BSON document");
  }
  *it = codec::BsonElements(bytes.data(), size);
  return {};
}

}  // namespace

base::Expected<void> apply_collection_entry(BsonBytes entry, CollectionMetadata* out) {
  codec::BsonElements it(nullptr, 0);
  if (auto framed = init_document(entry, &it, "listCollections entry"); !framed) {
    return framed;
  }
  bool named = false;
  while (it.next()) {
    const std::string_view key = it.key;
    if (key == "name" && it.holds_utf8()) {
      out->collection = it.utf8();
      named = true;
    } else if (key == "type" && it.holds_utf8()) {
      out->type = it.utf8();
    } else if (key == "options" && it.holds_document()) {
      read_collection_options(it.container(), out);
    }
  }
  if (!named) return base::bad_input("listCollections entry without a name");
  if (out->type.empty()) out->type = "collection";  // servers before 3.4 send no type
  out->known = true;
  return {};
}

base::Expected<void> apply_index_documents(const std::vector<std::vector<uint8_t>>& indexes,
                                           CollectionMetadata* out) {
  std::vector<IndexSpec> specs;
  for (const auto& bytes : indexes) {
    codec::BsonElements it(nullptr, 0);
    if (auto framed = init_document(bytes, &it, "listIndexes document"); !framed) {
      return framed;
    }
    IndexSpec spec;
    read_index_document(codec::BsonView{bytes.data(), static_cast<uint32_t>(bytes.size())}, &spec);
    specs.push_back(std::move(spec));
  }
  out->indexes = std::move(specs);
  out->indexes_known = true;
  return {};
}

base::Expected<void> apply_collection_stats(BsonBytes stats, CollectionMetadata* out) {
  codec::BsonElements it(nullptr, 0);
  if (auto framed = init_document(stats, &it, "collection statistics"); !framed) {
    return framed;
  }
  CollectionStatsFacts facts;
  bool counted = false;
  while (it.next()) {
    const std::string_view key = it.key;
    if (!it.holds_number()) continue;
    if (key == "count") {
      facts.documents = non_negative(it);
      counted = true;
    } else if (key == "size") {
      facts.size_bytes = non_negative(it);
    } else if (key == "avgObjSize") {
      facts.average_document_bytes = non_negative(it);
    } else if (key == "storageSize") {
      facts.storage_bytes = non_negative(it);
    }
  }
  if (!counted) return base::bad_input("collection statistics without a count");
  facts.known = true;
  out->stats = facts;
  return {};
}

base::Expected<void> apply_index_stats(const std::vector<std::vector<uint8_t>>& stats,
                                       CollectionMetadata* out) {
  for (IndexSpec& index : out->indexes) index.accesses.reset();
  for (const auto& bytes : stats) {
    codec::BsonElements it(nullptr, 0);
    if (auto framed = init_document(bytes, &it, "$indexStats document"); !framed) {
      return framed;
    }
    std::string name;
    std::optional<uint64_t> ops;
    while (it.next()) {
      const std::string_view key = it.key;
      if (key == "name" && it.holds_utf8()) {
        name = it.utf8();
      } else if (key == "accesses" && it.holds_document()) {
        codec::BsonElements accesses(it.container());
        if (accesses.find("ops") && accesses.holds_number()) ops = non_negative(accesses);
      }
    }
    if (!ops) continue;
    for (IndexSpec& index : out->indexes) {
      // A sharded collection reports each index once per shard: the uses add up.
      if (index.name == name) index.accesses = index.accesses.value_or(0) + *ops;
    }
  }
  out->index_usage_known = true;
  return {};
}

}  // namespace docguard::advisor
