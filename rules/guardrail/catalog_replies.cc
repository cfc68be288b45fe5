// What a successful catalog command tells the index catalog: indexes created or dropped through
// docguard apply at once, and a client's own exhausted listIndexes is a complete list.
#include <bson/bson.h>

#include "docguard/rules/index_catalog.h"

namespace docguard::rules {

namespace {

// Calls `each` with the iterator of every document element of the array `key` in `doc`.
template <typename Each>
void for_each_document(const codec::BsonView& doc, const char* key, const Each& each) {
  bson_iter_t it, child;
  if (doc.empty() || !bson_iter_init_from_data(&it, doc.data, doc.size) ||
      !bson_iter_find(&it, key) || !BSON_ITER_HOLDS_ARRAY(&it) || !bson_iter_recurse(&it, &child)) {
    return;
  }
  while (bson_iter_next(&child)) {
    if (BSON_ITER_HOLDS_DOCUMENT(&child)) each(codec::view_of(child));
  }
}

std::pair<std::string_view, std::string_view> split_ns(std::string_view ns) {
  const size_t dot = ns.find('.');
  if (dot == std::string_view::npos) return {};
  return {ns.substr(0, dot), ns.substr(dot + 1)};
}

}  // namespace

void learn_from_catalog_reply(IndexCatalog& catalog, const codec::CommandView& request,
                              const codec::BsonView& reply) {
  const std::string_view db = request.database;
  const std::string_view coll = request.collection;
  const std::string_view name = request.name;
  if (db.empty()) return;
  if (name == "dropDatabase") {
    catalog.forget_database(db);
    return;
  }
  if (name == "renameCollection") {
    const auto [from_db, from_coll] = split_ns(coll);
    const auto [to_db, to_coll] = split_ns(codec::find_string(request.body, "to"));
    if (!from_db.empty() && !to_db.empty()) catalog.rename(from_db, from_coll, to_db, to_coll);
    return;
  }
  if (coll.empty()) return;
  if (name == "createIndexes") {
    for_each_document(request.body, "indexes", [&](const codec::BsonView& spec) {
      KnownIndex index = known_index_of(spec);
      if (!index.keys.empty()) catalog.add(db, coll, std::move(index));
    });
  } else if (name == "dropIndexes" || name == "deleteIndexes") {
    bson_iter_t it;
    if (!bson_iter_init_from_data(&it, request.body.data, request.body.size) ||
        !bson_iter_find(&it, "index")) {
      return;
    }
    if (BSON_ITER_HOLDS_UTF8(&it)) {
      catalog.drop(db, coll, codec::utf8_of(it));
    } else if (BSON_ITER_HOLDS_DOCUMENT(&it)) {
      catalog.drop_keys(db, coll, index_keys_of(codec::view_of(it)));
    } else if (BSON_ITER_HOLDS_ARRAY(&it)) {
      bson_iter_t names;
      if (!bson_iter_recurse(&it, &names)) return;
      while (bson_iter_next(&names)) catalog.drop(db, coll, codec::utf8_of(names));
    }
  } else if (name == "drop") {
    // Gone: nothing to scan until it is created again.
    catalog.set_kind(db, coll, NamespaceKind::kAbsent, "drop");
  } else if (name == "create") {
    bson_iter_t it;
    const bool timeseries = bson_iter_init_from_data(&it, request.body.data, request.body.size) &&
                            bson_iter_find(&it, "timeseries");
    if (!codec::find_string(request.body, "viewOn").empty()) {
      catalog.set_kind(db, coll, NamespaceKind::kView, "create");
    } else if (timeseries) {
      catalog.set_kind(db, coll, NamespaceKind::kTimeseries, "create");
    } else {
      catalog.set(db, coll, {KnownIndex{"_id_", {{"_id", "1"}}}}, "create");
    }
  } else if (name == "listIndexes") {
    codec::BsonView batch;
    if (!codec::complete_first_batch(reply, &batch)) return;
    std::vector<KnownIndex> indexes;
    bson_iter_t it;
    if (!bson_iter_init_from_data(&it, batch.data, batch.size)) return;
    while (bson_iter_next(&it)) {
      if (!BSON_ITER_HOLDS_DOCUMENT(&it)) continue;
      KnownIndex index = known_index_of(codec::view_of(it));
      if (!index.keys.empty()) indexes.push_back(std::move(index));
    }
    catalog.set(db, coll, std::move(indexes), "listIndexes");
  }
}

}  // namespace docguard::rules
