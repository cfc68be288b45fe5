// What a successful catalog command tells the index catalog: indexes created or dropped through
// docguard apply at once, and a client's own exhausted listIndexes is a complete list.
#include <bson/bson.h>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/command_view.h"
#include "docguard/rules/index_catalog.h"

namespace docguard::rules {

namespace {

using codec::BsonElements;
using codec::well_framed;

// The element `key` of `doc`, when `doc` is framed and has it.
bool find_field(const codec::BsonView& doc, std::string_view key, BsonElements* out) {
  if (!well_framed(doc)) return false;
  *out = BsonElements(doc);
  return out->find(key);
}

// Calls `each` with every document element of the array `key` in `doc`.
template <typename Each>
void for_each_document(const codec::BsonView& doc, const char* key, const Each& each) {
  BsonElements array(nullptr, 0);
  if (!find_field(doc, key, &array) || !array.holds_array() || !well_framed(array.container())) {
    return;
  }
  for (BsonElements child(array.container()); child.next();) {
    if (child.holds_document()) each(child.container());
  }
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
    const auto [from_db, from_coll] = codec::split_namespace(coll);
    const auto [to_db, to_coll] = codec::split_namespace(codec::find_string(request.body, "to"));
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
    BsonElements index(nullptr, 0);
    if (!find_field(request.body, "index", &index)) return;
    if (index.holds_utf8()) {
      catalog.drop(db, coll, index.utf8());
    } else if (index.holds_document()) {
      catalog.drop_keys(db, coll, index_keys_of(index.container()));
    } else if (index.holds_array()) {
      if (!well_framed(index.container())) return;
      for (BsonElements names(index.container()); names.next();) {
        catalog.drop(db, coll, names.utf8());
      }
    }
  } else if (name == "drop") {
    // Gone: nothing to scan until it is created again.
    catalog.set_kind(db, coll, NamespaceKind::kAbsent, "drop");
  } else if (name == "create") {
    BsonElements timeseries_field(nullptr, 0);
    const bool timeseries = find_field(request.body, "timeseries", &timeseries_field);
    if (!codec::find_string(request.body, "viewOn").empty()) {
      catalog.set_kind(db, coll, NamespaceKind::kView, "create");
    } else if (timeseries) {
      catalog.set_kind(db, coll, NamespaceKind::kTimeseries, "create");
    } else {
      // The _id index takes the collection's default collation (an equality on _id then
      // uses it only under that collation), and is the clustered index of a clustered one.
      KnownIndex id{"_id_", {{"_id", "1"}}};
      BsonElements option(nullptr, 0);
      if (find_field(request.body, "collation", &option) && option.holds_document() &&
          codec::find_string(option.container(), "locale") != "simple") {
        id.collation.assign(reinterpret_cast<const char*>(option.value), option.value_size);
      }
      id.clustered = find_field(request.body, "clusteredIndex", &option);
      catalog.set(db, coll, {std::move(id)}, "create");
    }
  } else if (name == "collMod") {
    BsonElements index(nullptr, 0);
    if (!find_field(request.body, "index", &index) || !index.holds_document()) return;
    BsonElements hidden(nullptr, 0);
    if (!find_field(index.container(), "hidden", &hidden)) return;
    BsonElements pattern(nullptr, 0);
    const IndexKeys keys =
        find_field(index.container(), "keyPattern", &pattern) && pattern.holds_document()
            ? index_keys_of(pattern.container())
            : IndexKeys{};
    catalog.set_hidden(db, coll, codec::find_string(index.container(), "name"), keys,
                       hidden.as_bool());
  } else if (name == "listIndexes") {
    codec::BsonView batch;
    if (!codec::complete_first_batch(reply, &batch)) return;
    std::vector<KnownIndex> indexes;
    if (!well_framed(batch)) return;
    for (BsonElements it(batch); it.next();) {
      // An entry that is not an index spec docguard reads ({spec, indexBuildInfo} with
      // includeIndexBuildInfo, a key pattern it cannot parse): the list would be taken for
      // complete without that index, and queries it serves refused. It is not learned.
      if (!it.holds_document()) return;
      KnownIndex index = known_index_of(it.container());
      if (index.keys.empty()) return;
      indexes.push_back(std::move(index));
    }
    catalog.set(db, coll, std::move(indexes), "listIndexes", /*keep_kind=*/true);
  }
}

}  // namespace docguard::rules
