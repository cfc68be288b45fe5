// Collection metadata from BSON: the index documents and options shared with metadata.json, and
// the cluster's listCollections, listIndexes, statistics and $indexStats replies.
#include "docguard/advisor/cluster_metadata.h"

#include <optional>
#include <string_view>

#include "docguard/advisor/catalog_documents.h"
#include "docguard/codec/bson_view.h"

namespace docguard::advisor {
namespace {

uint64_t non_negative(const bson_iter_t* it) {
  const int64_t value = bson_iter_as_int64(it);
  return value > 0 ? static_cast<uint64_t>(value) : 0;
}

base::Expected<void> init_document(BsonBytes bytes, bson_t* doc, bson_iter_t* it,
                                   const char* what) {
  if (bytes.empty() || !bson_init_static(doc, bytes.data(), bytes.size()) ||
      !bson_iter_init(it, doc)) {
    return base::bad_input(std::string(what) + " is not a BSON document");
  }
  return {};
}

}  // namespace

base::Expected<void> apply_collection_entry(BsonBytes entry, CollectionMetadata* out) {
  bson_t doc;
  bson_iter_t it;
  if (auto framed = init_document(entry, &doc, &it, "listCollections entry"); !framed) {
    return framed;
  }
  bool named = false;
  while (bson_iter_next(&it)) {
    const std::string_view key = bson_iter_key(&it);
    bson_iter_t child;
    if (key == "name" && BSON_ITER_HOLDS_UTF8(&it)) {
      out->collection = codec::utf8_of(&it);
      named = true;
    } else if (key == "type" && BSON_ITER_HOLDS_UTF8(&it)) {
      out->type = codec::utf8_of(&it);
    } else if (key == "options" && BSON_ITER_HOLDS_DOCUMENT(&it) &&
               bson_iter_recurse(&it, &child)) {
      read_collection_options(&child, out);
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
    bson_t doc;
    bson_iter_t it;
    if (auto framed = init_document(bytes, &doc, &it, "listIndexes document"); !framed) {
      return framed;
    }
    IndexSpec spec;
    read_index_document(&it, &spec);
    specs.push_back(std::move(spec));
  }
  out->indexes = std::move(specs);
  out->indexes_known = true;
  return {};
}

base::Expected<void> apply_collection_stats(BsonBytes stats, CollectionMetadata* out) {
  bson_t doc;
  bson_iter_t it;
  if (auto framed = init_document(stats, &doc, &it, "collection statistics"); !framed) {
    return framed;
  }
  CollectionStatsFacts facts;
  bool counted = false;
  while (bson_iter_next(&it)) {
    const std::string_view key = bson_iter_key(&it);
    if (!BSON_ITER_HOLDS_NUMBER(&it)) continue;
    if (key == "count") {
      facts.documents = non_negative(&it);
      counted = true;
    } else if (key == "size") {
      facts.size_bytes = non_negative(&it);
    } else if (key == "avgObjSize") {
      facts.average_document_bytes = non_negative(&it);
    } else if (key == "storageSize") {
      facts.storage_bytes = non_negative(&it);
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
    bson_t doc;
    bson_iter_t it;
    if (auto framed = init_document(bytes, &doc, &it, "$indexStats document"); !framed) {
      return framed;
    }
    std::string name;
    std::optional<uint64_t> ops;
    while (bson_iter_next(&it)) {
      const std::string_view key = bson_iter_key(&it);
      bson_iter_t accesses;
      if (key == "name" && BSON_ITER_HOLDS_UTF8(&it)) {
        name = codec::utf8_of(&it);
      } else if (key == "accesses" && BSON_ITER_HOLDS_DOCUMENT(&it) &&
                 bson_iter_recurse(&it, &accesses) && bson_iter_find(&accesses, "ops") &&
                 BSON_ITER_HOLDS_NUMBER(&accesses)) {
        ops = non_negative(&accesses);
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
