// The per-namespace registry: a shared-locked map with each thread's last answer beside it.
#include "docguard/rules/namespace_registry.h"

#include <atomic>
#include <mutex>

#include "docguard/base/short_equal.h"

namespace docguard::rules {

namespace {

std::atomic<uint64_t> g_next_registry_id{1};

// The namespace this thread looked up last: its statistics hold its names. Constant-initialised,
// so reading it costs no check that it was constructed.
struct LastLookup {
  uint64_t registry = 0;
  CollectionStats* stats = nullptr;
};
constinit thread_local LastLookup t_last;

// The name being looked up, kept for its capacity.
std::string& key_buffer() {
  thread_local std::string key;
  return key;
}

}  // namespace

NamespaceRegistry::NamespaceRegistry()
    : id_(g_next_registry_id.fetch_add(1)),
      overflow_(std::make_unique<CollectionStats>(std::string(kOverflowLabel),
                                                  std::string(kOverflowLabel))) {}

CollectionStats* NamespaceRegistry::find_or_add(std::string_view db, std::string_view coll,
                                                size_t max_namespaces) {
  // Consecutive commands mostly name the same namespace: no shared lock (a cache line every io
  // thread writes), no hash and no copy of the name for them. The overflow bucket is never
  // remembered: a reload may raise max_namespaces and give the namespace its own statistics.
  // A namespace's statistics live as long as the registry, which never removes one.
  if (t_last.registry == id_ && base::same_text(t_last.stats->coll, coll) &&
      base::same_text(t_last.stats->db, db)) {
    return t_last.stats;
  }
  return find_or_add_slow(db, coll, max_namespaces);
}

CollectionStats* NamespaceRegistry::find_or_add_slow(std::string_view db, std::string_view coll,
                                                     size_t max_namespaces) {
  std::string& key = key_buffer();
  write_namespace_key(key, db, coll);
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
  t_last = {id_, found};
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
