// Which indexes a namespace has, or that this is not known: what the query guardrail judges
// queries against. Never guessed: it learns from
//   * docguard's introspection passes (the proxy hands over each collection's listIndexes),
//   * clients' own listIndexes replies (a complete list when the cursor is exhausted),
//   * successful createIndexes / dropIndexes / drop / dropDatabase / renameCollection / create
//     commands that pass through docguard (catalog_replies.cc), applied at once.
// A namespace nobody has listed is unknown, even after a createIndexes through docguard: that
// index is known to exist (so queries it serves pass) but others may exist too, so a query it
// does not serve is "unknown", never refused.
//
// Thread safety: every method may be called from any thread. Lookups take a shared lock and copy
// a shared pointer; updates replace the namespace's entry.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "docguard/base/hash.h"
#include "docguard/codec/bson_view.h"
#include "docguard/codec/command_view.h"
#include "docguard/rules/query_shape.h"

namespace docguard::rules {

// One index as listIndexes describes it: its key pattern, and the options that decide which
// queries the server's planner may use it for (index_eligibility.h).
struct KnownIndex {
  std::string name;
  IndexKeys keys;
  bool sparse = false;
  bool hidden = false;  // the planner never uses a hidden index
  // Each a whole BSON document's bytes, empty when the index has none: the filter of a partial
  // index, the index's own collation (empty: the simple collation), a wildcard index's
  // projection.
  std::string partial_filter = {};
  std::string collation = {};
  std::string wildcard_projection = {};
  int s2_version = 0;      // 2dsphereIndexVersion; 0 when not given
  bool clustered = false;  // a clustered collection's index: its bounded scans pass notablescan
  // Set by the catalog when it stores the index: whether the guardrail's fast path may take an
  // equality on the leading field as served (a plain index: ordered and hashed fields only, not
  // sparse, partial or hidden), and what the leading field is.
  enum class FastLeading : uint8_t { kNone, kOrdered, kHashed };
  FastLeading fast_leading = FastLeading::kNone;
};

// What the guardrail's fast path may take of this index (KnownIndex::fast_leading).
KnownIndex::FastLeading fast_leading_of(const KnownIndex& index);

// An index from its listIndexes / createIndexes specification document (key, name, options);
// `keys` empty when the document has no key pattern.
KnownIndex known_index_of(const codec::BsonView& spec);

// What the namespace is: the server never refuses a scan of a collection that does not exist
// (nothing to scan), and views and time-series collections are planned against another
// collection's indexes.
enum class NamespaceKind : uint8_t { kCollection, kAbsent, kView, kTimeseries };

struct NamespaceIndexes {
  std::vector<KnownIndex> indexes;
  NamespaceKind kind = NamespaceKind::kCollection;
  // Every index of the namespace is listed; false: only some are known (created through
  // docguard before any listing), and what they do not serve is unknown.
  bool complete = false;
  // Where the list came from last: "introspection", "listIndexes", "createIndexes", ...
  std::string source;
};

class IndexCatalog {
 public:
  // At most `max_namespaces` namespaces are remembered; past it new ones stay unknown.
  explicit IndexCatalog(size_t max_namespaces = 10'000);
  IndexCatalog(const IndexCatalog&) = delete;
  IndexCatalog& operator=(const IndexCatalog&) = delete;

  // The complete list of a namespace's indexes. It is a collection's, unless `keep_kind` and
  // the namespace is known to be a view or time-series collection (a client's listIndexes of
  // one lists the indexes the server plans on another collection with).
  void set(std::string_view db, std::string_view coll, std::vector<KnownIndex> indexes,
           std::string_view source, bool keep_kind = false);
  // collMod {index: {name | keyPattern, hidden}}: the index hidden from the planner, or not.
  void set_hidden(std::string_view db, std::string_view coll, std::string_view name,
                  const IndexKeys& keys, bool hidden);
  // The namespace is known to be a view, a time-series collection, or not to exist (dropped).
  void set_kind(std::string_view db, std::string_view coll, NamespaceKind kind,
                std::string_view source);
  // The namespace's indexes are not known (e.g. listIndexes was refused).
  void forget(std::string_view db, std::string_view coll);
  void forget_database(std::string_view db);
  // An index now exists (a createIndexes reply): added, or its keys replaced.
  void add(std::string_view db, std::string_view coll, KnownIndex index);
  // dropIndexes: by name, "*" (all but _id_), or by keys.
  void drop(std::string_view db, std::string_view coll, std::string_view name);
  void drop_keys(std::string_view db, std::string_view coll, const IndexKeys& keys);
  // renameCollection: the indexes move with the collection.
  void rename(std::string_view from_db, std::string_view from_coll, std::string_view to_db,
              std::string_view to_coll);

  // What is known of "db.coll": null when nothing is.
  std::shared_ptr<const NamespaceIndexes> find(std::string_view db, std::string_view coll) const;
  // The same for the message path: this thread's last answer while the catalog is unchanged and
  // the namespace the same (no lock, no reference count), else find(). Valid until this thread's
  // next call.
  const NamespaceIndexes* find_cached(std::string_view db, std::string_view coll) const;
  // Bumped on every change: lets a reader cache its last answer.
  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  size_t size() const;
  // {"db.coll": {"complete": bool, "source": "...", "indexes": [{"name", "key"}]}} for /status.
  std::string status_json(size_t max_namespaces = 200) const;

 private:
  using Entries = std::unordered_map<std::string, std::shared_ptr<const NamespaceIndexes>,
                                     base::StringHash, std::equal_to<>>;
  // Runs `change` on a copy of the namespace's entry (a fresh incomplete one when unknown).
  template <typename Change>
  void update(std::string_view db, std::string_view coll, const Change& change);

  size_t max_namespaces_;
  const uint64_t id_;  // tells this catalog's entries in a thread's cache from another's
  mutable std::shared_mutex mutex_;
  Entries entries_;
  std::atomic<uint64_t> version_{1};
};

// Feeds the catalog from a catalog command and the upstream's successful reply to it.
void learn_from_catalog_reply(IndexCatalog& catalog, const codec::CommandView& request,
                              const codec::BsonView& reply);

// An index's keys from its key document ({a: 1, b: -1, t: "text"}).
IndexKeys index_keys_of(const codec::BsonView& key_document);

}  // namespace docguard::rules
