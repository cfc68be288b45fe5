// Every namespace's statistics, found by name: one CollectionStats per "db.coll" the engine has
// seen, up to tracking.max_namespaces, and one shared overflow bucket for the rest. Entries are
// never removed, so a pointer handed out stays valid for the registry's life.
//
// Thread safety: any thread. Lookups take a shared lock, and a thread's last answer is kept so
// that consecutive commands naming the same namespace take none.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "docguard/base/hash.h"
#include "docguard/base/key_parts.h"
#include "docguard/base/short_equal.h"
#include "docguard/codec/command_view.h"
#include "docguard/rules/collection_stats.h"

namespace docguard::rules {

// A namespace as one map key: its database and collection as two key parts. Either name may
// hold a '.' as a client sends it (the server refuses such a database name, after docguard has
// counted the request): db "a.b" with collection "c" and db "a" with collection "b.c" are two
// keys, not one "a.b.c" whose state the other would take.
inline void write_namespace_key(std::string& key, std::string_view db, std::string_view coll) {
  key.clear();
  base::append_key_part(key, db);
  base::append_key_part(key, coll);
}
// Whether `key` is write_namespace_key's key of db and coll.
inline bool is_namespace_key(std::string_view key, std::string_view db, std::string_view coll) {
  const char* const end = key.data() + key.size();
  const char* const at = base::match_key_part(key.data(), end, db);
  return at != nullptr && base::match_key_part(at, end, coll) == end;
}

class NamespaceRegistry {
 public:
  NamespaceRegistry();
  NamespaceRegistry(const NamespaceRegistry&) = delete;
  NamespaceRegistry& operator=(const NamespaceRegistry&) = delete;

  // The namespace's statistics; past `max_namespaces` known ones, the overflow bucket (a bound
  // lowered by a reload leaves the namespaces already known their own).
  CollectionStats* find_or_add(std::string_view db, std::string_view coll, size_t max_namespaces);
  bool is_overflow(const CollectionStats* stats) const { return stats == overflow_.get(); }
  const CollectionStats& overflow() const { return *overflow_; }

  // Every namespace's statistics, the overflow bucket last.
  std::vector<CollectionStats*> all() const;
  // Each named namespace with its "db.coll", under the shared lock (not the overflow bucket).
  void for_each(const std::function<void(const std::string&, const CollectionStats&)>& visit) const;

 private:
  // Tells this registry's entries in a thread's cache from another registry's.
  const uint64_t id_;
  // find_or_add past this thread's last namespace: out of line, so the common case sets up no
  // frame for the locks and the map.
  [[gnu::noinline]] CollectionStats* find_or_add_slow(std::string_view db, std::string_view coll,
                                                      size_t max_namespaces);
  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<CollectionStats>, base::StringHash,
                     std::equal_to<>>
      namespaces_;
  std::unique_ptr<CollectionStats> overflow_;
};

}  // namespace docguard::rules
