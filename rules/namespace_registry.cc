// The per-namespace registry: a shared-locked map with each thread's last answer beside it.
#include "docguard/rules/namespace_registry.h"

#include <atomic>
#include <mutex>

#include "docguard/base/key_parts.h"

namespace docguard::rules {

namespace {

std::atomic<uint64_t> g_next_registry_id{1};

// The namespace this thread looked up last, and its statistics.
struct LastLookup {
  uint64_t registry = 0;
  std::string ns;      // "db.coll"
  size_t db_size = 0;  // where db ends in `ns`
  CollectionStats* stats = nullptr;
  std::string key;  // the name being looked up, kept for its capacity
};

LastLookup& last_lookup() {
  thread_local LastLookup last;
  return last;
}

// The map's key: the two names as key parts. Either may hold a '.' as a client sends it (the
// server refuses such a database name, after docguard has counted the request): db "a.b" with
// collection "c" and db "a" with collection "b.c" are two namespaces, not one whose statistics
// and labels the other would take.
void write_key(std::string& key, std::string_view db, std::string_view coll) {
  key.clear();
  base::append_key_part(key, db);
  base::append_key_part(key, coll);
}

}  // namespace

NamespaceRegistry::NamespaceRegistry()
    : id_(g_next_registry_id.fetch_add(1)),
      overflow_(std::make_unique<CollectionStats>(std::string(kOverflowLabel),
                                                  std::string(kOverflowLabel))) {}

CollectionStats* NamespaceRegistry::find_or_add(std::string_view db, std::string_view coll,
                                                size_t max_namespaces) {
  LastLookup& last = last_lookup();
  // Consecutive commands mostly name the same namespace: no shared lock (a cache line every io
  // thread writes), no hash and no copy of the name for them. The overflow bucket is never
  // remembered: a reload may raise max_namespaces and give the namespace its own statistics.
  if (last.registry == id_ && last.db_size == db.size() && is_namespace(last.ns, db, coll)) {
    return last.stats;
  }
  std::string& key = last.key;
  write_key(key, db, coll);
  CollectionStats* found = nullptr;
  {
    std::shared_lock lock(mutex_);
    if (auto it = namespaces_.find(key); it != namespaces_.end()) found = it->second.get();
  }
  if (found == nullptr) {
    std::unique_lock lock(mutex_);
    if (auto it = namespaces_.find(key); it != namespaces_.end()) {
      found = it->second.get();
    } else if (namespaces_.size() >= max_namespaces) {
      return overflow_.get();
    } else {
      auto stats = std::make_unique<CollectionStats>(std::string(db), std::string(coll));
      found = stats.get();
      namespaces_.emplace(key, std::move(stats));
    }
  }
  last.registry = id_;
  last.ns.assign(db).append(".").append(coll);
  last.db_size = db.size();
  last.stats = found;
  return found;
}

std::vector<CollectionStats*> NamespaceRegistry::all() const {
  std::vector<CollectionStats*> out;
  {
    std::shared_lock lock(mutex_);
    out.reserve(namespaces_.size() + 1);
    for (const auto& [name, stats] : namespaces_) out.push_back(stats.get());
  }
  out.push_back(overflow_.get());
  return out;
}

void NamespaceRegistry::for_each(
    const std::function<void(const std::string&, const CollectionStats&)>& visit) const {
  std::shared_lock lock(mutex_);
  for (const auto& [key, stats] : namespaces_) visit(stats->db + "." + stats->coll, *stats);
}

}  // namespace docguard::rules
