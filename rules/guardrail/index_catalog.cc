#include "docguard/rules/index_catalog.h"

#include <bson/bson.h>

#include <algorithm>
#include <mutex>

#include "docguard/base/json_writer.h"
#include "docguard/codec/bson_elements.h"

namespace docguard::rules {

namespace {

std::string ns_key(std::string_view db, std::string_view coll) {
  std::string key;
  key.reserve(db.size() + 1 + coll.size());
  key.append(db).append(".").append(coll);
  return key;
}

// The text of an index key's value: "1", "-1", "text", "2dsphere", "hashed".
std::string key_type(const codec::BsonElements& e) {
  if (e.holds_utf8()) return std::string(e.utf8());
  if (e.holds_number()) return e.as_double() < 0 ? "-1" : "1";
  return "1";
}

std::atomic<uint64_t> g_next_catalog_id{1};

std::string_view kind_name(NamespaceKind kind) {
  switch (kind) {
    case NamespaceKind::kCollection:
      return "collection";
    case NamespaceKind::kAbsent:
      return "absent";
    case NamespaceKind::kView:
      return "view";
    case NamespaceKind::kTimeseries:
      return "timeseries";
  }
  return "collection";
}

std::string bytes_of(const codec::BsonElements& e) {
  return std::string(reinterpret_cast<const char*>(e.value), e.value_size);
}

}  // namespace

IndexCatalog::IndexCatalog(size_t max_namespaces)
    : max_namespaces_(max_namespaces), id_(g_next_catalog_id.fetch_add(1)) {}

const NamespaceIndexes* IndexCatalog::find_cached(std::string_view db,
                                                  std::string_view coll) const {
  struct Last {
    uint64_t catalog = 0;
    uint64_t version = 0;
    std::string ns;
    std::shared_ptr<const NamespaceIndexes> found;
  };
  thread_local Last last;
  const uint64_t now = version();
  if (last.catalog == id_ && last.version == now && last.ns.size() == db.size() + 1 + coll.size() &&
      last.ns.starts_with(db) && last.ns[db.size()] == '.' && last.ns.ends_with(coll)) {
    return last.found.get();
  }
  // The version is read before the lookup: a change in between is seen at the next call.
  last.found = find(db, coll);
  last.catalog = id_;
  last.version = now;
  last.ns.assign(db).append(".").append(coll);
  return last.found.get();
}

IndexKeys index_keys_of(const codec::BsonView& key_document) {
  IndexKeys keys;
  if (!codec::well_framed(key_document)) return keys;
  for (codec::BsonElements e(key_document); e.next();) {
    keys.emplace_back(std::string(e.key), key_type(e));
  }
  return keys;
}

KnownIndex::FastLeading fast_leading_of(const KnownIndex& index) {
  using Fast = KnownIndex::FastLeading;
  if (index.keys.empty() || index.sparse || index.hidden || !index.partial_filter.empty()) {
    return Fast::kNone;
  }
  // A text, geo or wildcard field anywhere changes which predicates the index serves (a 2dsphere
  // or text index needs its own predicate beside).
  for (const auto& [name, type] : index.keys) {
    if ((index_key_direction(type) == 0 && type != "hashed") || name.ends_with("$**")) {
      return Fast::kNone;
    }
  }
  return index.keys.front().second == "hashed" ? Fast::kHashed : Fast::kOrdered;
}

KnownIndex known_index_of(const codec::BsonView& spec) {
  KnownIndex index;
  for (codec::BsonElements e(spec); e.next();) {
    const std::string_view key = e.key;
    if (key == "name") {
      index.name = std::string(e.utf8());
    } else if (key == "key" && e.holds_document()) {
      index.keys = index_keys_of(e.container());
    } else if (key == "sparse") {
      index.sparse = e.as_bool();
    } else if (key == "hidden") {
      index.hidden = e.as_bool();
    } else if (key == "partialFilterExpression" && e.holds_document()) {
      index.partial_filter = bytes_of(e);
    } else if (key == "collation" && e.holds_document()) {
      // {locale: "simple"} is the simple collation, which listIndexes does not show.
      if (codec::find_string(e.container(), "locale") != "simple") index.collation = bytes_of(e);
    } else if (key == "wildcardProjection" && e.holds_document()) {
      index.wildcard_projection = bytes_of(e);
    } else if (key == "clustered") {
      index.clustered = e.as_bool();
    } else if (key == "2dsphereIndexVersion" && e.holds_number()) {
      index.s2_version = static_cast<int>(e.as_int64());
    }
  }
  return index;
}

template <typename Change>
void IndexCatalog::update(std::string_view db, std::string_view coll, const Change& change) {
  std::unique_lock lock(mutex_);
  auto it = entries_.find(ns_key(db, coll));
  if (it == entries_.end() && entries_.size() >= max_namespaces_) return;
  auto next = it == entries_.end() ? std::make_shared<NamespaceIndexes>()
                                   : std::make_shared<NamespaceIndexes>(*it->second);
  change(*next);
  for (KnownIndex& index : next->indexes) index.fast_leading = fast_leading_of(index);
  if (it == entries_.end()) {
    entries_.emplace(ns_key(db, coll), std::move(next));
  } else {
    it->second = std::move(next);
  }
  version_.fetch_add(1, std::memory_order_acq_rel);
}

void IndexCatalog::set(std::string_view db, std::string_view coll, std::vector<KnownIndex> indexes,
                       std::string_view source, bool keep_kind) {
  update(db, coll, [&](NamespaceIndexes& n) {
    n.indexes = std::move(indexes);
    const bool planned_elsewhere =
        n.kind == NamespaceKind::kView || n.kind == NamespaceKind::kTimeseries;
    if (!keep_kind || !planned_elsewhere) n.kind = NamespaceKind::kCollection;
    n.complete = true;
    n.source = std::string(source);
  });
}

void IndexCatalog::set_kind(std::string_view db, std::string_view coll, NamespaceKind kind,
                            std::string_view source) {
  update(db, coll, [&](NamespaceIndexes& n) {
    n.kind = kind;
    // A collection created again after a drop starts with its _id index alone.
    if (kind == NamespaceKind::kAbsent) n.indexes = {KnownIndex{"_id_", {{"_id", "1"}}}};
    n.complete = true;
    n.source = std::string(source);
  });
}

void IndexCatalog::forget(std::string_view db, std::string_view coll) {
  std::unique_lock lock(mutex_);
  if (entries_.erase(ns_key(db, coll)) > 0) version_.fetch_add(1, std::memory_order_acq_rel);
}

void IndexCatalog::forget_database(std::string_view db) {
  std::unique_lock lock(mutex_);
  const size_t before = entries_.size();
  for (auto it = entries_.begin(); it != entries_.end();) {
    const std::string& ns = it->first;
    if (ns.size() > db.size() && ns.starts_with(db) && ns[db.size()] == '.') {
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  if (entries_.size() != before) version_.fetch_add(1, std::memory_order_acq_rel);
}

void IndexCatalog::add(std::string_view db, std::string_view coll, KnownIndex index) {
  update(db, coll, [&](NamespaceIndexes& n) {
    auto same = std::find_if(n.indexes.begin(), n.indexes.end(), [&](const KnownIndex& k) {
      return k.name == index.name || k.keys == index.keys;
    });
    if (same != n.indexes.end()) {
      *same = std::move(index);
    } else {
      n.indexes.push_back(std::move(index));
    }
    if (n.source.empty()) n.source = "createIndexes";
    // createIndexes creates a collection that does not exist.
    if (n.kind == NamespaceKind::kAbsent) n.kind = NamespaceKind::kCollection;
  });
}

void IndexCatalog::set_hidden(std::string_view db, std::string_view coll, std::string_view name,
                              const IndexKeys& keys, bool hidden) {
  update(db, coll, [&](NamespaceIndexes& n) {
    for (KnownIndex& k : n.indexes) {
      if ((!name.empty() && k.name == name) || (name.empty() && !keys.empty() && k.keys == keys)) {
        k.hidden = hidden;  // update() sets each index's fast path again
      }
    }
  });
}

void IndexCatalog::drop(std::string_view db, std::string_view coll, std::string_view name) {
  update(db, coll, [&](NamespaceIndexes& n) {
    std::erase_if(n.indexes, [&](const KnownIndex& k) {
      return name == "*" ? k.name != "_id_" : k.name == name;
    });
  });
}

void IndexCatalog::drop_keys(std::string_view db, std::string_view coll, const IndexKeys& keys) {
  update(db, coll, [&](NamespaceIndexes& n) {
    std::erase_if(n.indexes, [&](const KnownIndex& k) { return k.keys == keys; });
  });
}

void IndexCatalog::rename(std::string_view from_db, std::string_view from_coll,
                          std::string_view to_db, std::string_view to_coll) {
  std::unique_lock lock(mutex_);
  auto from = entries_.find(ns_key(from_db, from_coll));
  std::shared_ptr<const NamespaceIndexes> moved;
  if (from != entries_.end()) {
    moved = std::move(from->second);
    entries_.erase(from);
  }
  entries_.erase(ns_key(to_db, to_coll));
  if (moved != nullptr) entries_.emplace(ns_key(to_db, to_coll), std::move(moved));
  version_.fetch_add(1, std::memory_order_acq_rel);
}

std::shared_ptr<const NamespaceIndexes> IndexCatalog::find(std::string_view db,
                                                           std::string_view coll) const {
  thread_local std::string key;
  key.assign(db).append(".").append(coll);
  std::shared_lock lock(mutex_);
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : it->second;
}

size_t IndexCatalog::size() const {
  std::shared_lock lock(mutex_);
  return entries_.size();
}

std::string IndexCatalog::status_json(size_t max_namespaces) const {
  std::vector<std::pair<std::string, std::shared_ptr<const NamespaceIndexes>>> copy;
  {
    std::shared_lock lock(mutex_);
    copy.assign(entries_.begin(), entries_.end());
  }
  std::sort(copy.begin(), copy.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  if (copy.size() > max_namespaces) copy.resize(max_namespaces);
  json::Writer w;
  w.begin_object();
  for (const auto& [ns, n] : copy) {
    w.key(ns).begin_object().member("kind", kind_name(n->kind)).member("complete", n->complete);
    w.member("source", n->source).key("indexes").begin_array();
    for (const auto& index : n->indexes) {
      w.begin_object().member("name", index.name).member("key", index_keys_text(index.keys));
      w.end_object();
    }
    w.end_array().end_object();
  }
  w.end_object();
  return w.take();
}

}  // namespace docguard::rules
