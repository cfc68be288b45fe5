// Indexes against each other and against the queries: redundant indexes, unused indexes, and
// query shapes no index serves.
#include <algorithm>

#include "docguard/advisor/detectors.h"
#include "docguard/advisor/text_format.h"

namespace docguard::advisor {
namespace {

using IndexKeys = std::vector<std::pair<std::string, std::string>>;

bool index_list_known(const CollectionMetadata& m) {
  return m.known && m.indexes_known && !m.is_view();
}

bool is_id_index(const IndexSpec& index) {
  return index.name == "_id_" || (index.keys.size() == 1 && index.keys.front().first == "_id");
}

// 1 or -1 for an ascending or descending key, 0 for text, hashed, geo and wildcard keys.
int direction_of(const std::pair<std::string, std::string>& key) {
  return key.first.ends_with("$**") ? 0 : index_key_direction(key.second);
}

bool plain_keys(const IndexSpec& index) {
  return std::all_of(index.keys.begin(), index.keys.end(),
                     [](const auto& key) { return direction_of(key) != 0; });
}

// Whether `shorter`'s keys lead `longer`'s, all in the same direction or all reversed (an index
// can be walked backwards, so {a: 1, b: -1} serves what {a: -1, b: 1} serves).
bool leads(const IndexSpec& shorter, const IndexSpec& longer) {
  if (shorter.keys.empty() || shorter.keys.size() >= longer.keys.size()) return false;
  bool same = true, reversed = true;
  for (size_t i = 0; i < shorter.keys.size(); ++i) {
    if (shorter.keys[i].first != longer.keys[i].first) return false;
    const int a = direction_of(shorter.keys[i]);
    const int b = direction_of(longer.keys[i]);
    same = same && a == b;
    reversed = reversed && a == -b;
  }
  return same || reversed;
}

// Options that give an index a purpose of its own beyond serving queries, or make it hold other
// entries than a plain index on the same keys would: a unique index enforces a constraint, a TTL
// index deletes documents, a partial or sparse index holds only some documents (so the longer
// index may not serve the queries it does, or it may be the small one kept on purpose), and a
// collation changes how strings compare (the metadata does not say which collation, so two
// collations cannot be compared).
bool plain_options(const IndexSpec& index) {
  return !index.unique && !index.expire_after_seconds && !index.partial && !index.sparse &&
         !index.collation;
}

std::string describe(const IndexSpec& index) {
  return "`" + index.name + "` " + index_keys_text(index.keys);
}

bool is_identifier(const std::string& name) {
  return !name.empty() && !(name[0] >= '0' && name[0] <= '9') &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9');
         });
}

// How the shell names a collection: db.orders, or db.getCollection("order-items").
std::string shell_collection(const std::string& collection) {
  return is_identifier(collection) ? "db." + collection
                                   : "db.getCollection(\"" + collection + "\")";
}

Finding index_finding(const std::string& db, const std::string& collection,
                      const CollectionMetadata& m, Finding::Kind kind, Severity severity,
                      std::string field) {
  Finding f;
  f.db = db;
  f.collection = collection;
  f.kind = kind;
  f.severity = severity;
  f.field = std::move(field);
  f.source = metadata_finding_source(m);
  return f;
}

bool keys_lead(const IndexKeys& shorter, const IndexKeys& longer) {
  return shorter.size() < longer.size() &&
         std::equal(shorter.begin(), shorter.end(), longer.begin());
}

// One query shape no index serves, with the shapes folded into it whose suggested index is a
// prefix of its own (one index serves them all, so one finding says so).
struct Unserved {
  const QueryShapeCounter::Entry* entry;
  IndexKeys keys;
  std::vector<const QueryShapeCounter::Entry*> folded;
};

std::string runs_text(uint64_t runs, uint32_t sample_every) {
  std::string text = with_commas(runs) + (runs == 1 ? " time" : " times");
  if (sample_every > 1) {
    text += " in the commands sampled (1 in " + std::to_string(sample_every) + ", so about " +
            with_commas(runs * sample_every) + " in all)";
  }
  return text;
}

// "`status`", "`status` or `region`", "`createdAt` (the sort) or `price`".
std::string wanted_first_keys(const QueryShape& shape) {
  std::vector<std::string> fields;
  if (!shape.equality.empty()) {
    fields = shape.equality;
  } else {
    if (!shape.sort.empty()) fields.push_back(shape.sort.front().field);
    fields.insert(fields.end(), shape.range.begin(), shape.range.end());
  }
  std::string text;
  for (size_t i = 0; i < fields.size(); ++i) {
    text += (i == 0 ? "`" : i + 1 == fields.size() ? " or `" : ", `") + fields[i] + "`";
  }
  return text;
}

bool has_skipped(const QueryShape& shape, const char* op) {
  return std::find(shape.skipped.begin(), shape.skipped.end(), op) != shape.skipped.end();
}

// $text and $near fail without their own index, so a query that ran with them used one.
bool uses_its_own_index(const QueryShape& shape) {
  return has_skipped(shape, "$text") || has_skipped(shape, "$near") ||
         has_skipped(shape, "$nearSphere");
}

}  // namespace

const char* metadata_finding_source(const CollectionMetadata& metadata) {
  if (metadata.source == "dump") return "dump";
  if (metadata.source == "traffic") return "traffic";
  return "metadata";
}

void detect_redundant_indexes(const std::string& db, const std::string& collection,
                              const CollectionMetadata& m, std::vector<Finding>& out) {
  if (!index_list_known(m)) return;
  for (const IndexSpec& shorter : m.indexes) {
    if (is_id_index(shorter) || !plain_options(shorter) || !plain_keys(shorter)) continue;
    // The longer index must hold an entry for every document the shorter one does: geo and text
    // keys skip documents without them, as sparse and partial indexes do.
    const auto longer = std::find_if(m.indexes.begin(), m.indexes.end(), [&](const IndexSpec& l) {
      return &l != &shorter && plain_keys(l) && !l.sparse && !l.partial &&
             l.collation == shorter.collation && leads(shorter, l);
    });
    if (longer == m.indexes.end()) continue;
    Finding f = index_finding(db, collection, m, Finding::Kind::kRedundantIndex, Severity::kInfo,
                              shorter.keys.front().first);
    f.evidence = "index " + describe(shorter) + " is the leading part of " + describe(*longer) +
                 ": every query it serves, that index serves too";
    if (m.index_usage_known && shorter.accesses) {
      f.evidence += "; $indexStats counts " + with_commas(*shorter.accesses) +
                    " uses of it since the server last started";
    }
    f.pattern = "drop redundant indexes";
    const std::string coll = shell_collection(collection);
    f.suggestion =
        "Every write updates both indexes and both take cache. Hide the shorter one "
        "first to see that no query slows (MongoDB 4.4+): " +
        coll + ".hideIndex(\"" + shorter.name + "\"), then drop it: " + coll + ".dropIndex(\"" +
        shorter.name + "\"). A query that hints `" + shorter.name + "` by name must hint `" +
        longer->name + "` instead.";
    out.push_back(std::move(f));
  }
}

void detect_unused_indexes(const std::string& db, const std::string& collection,
                           const CollectionMetadata& m, std::vector<Finding>& out) {
  if (!index_list_known(m) || !m.index_usage_known) return;
  for (const IndexSpec& index : m.indexes) {
    // The _id index cannot be dropped; a unique or TTL index works on writes, which
    // $indexStats does not count as accesses.
    if (is_id_index(index) || index.unique || index.expire_after_seconds) continue;
    if (!index.accesses || *index.accesses != 0) continue;
    Finding f = index_finding(db, collection, m, Finding::Kind::kUnusedIndex, Severity::kInfo,
                              index.keys.empty() ? "" : index.keys.front().first);
    f.evidence = "index " + describe(index) +
                 " has 0 accesses in $indexStats, which counts since the server last started "
                 "(or since the index was built), on each member separately";
    f.pattern = "drop unused indexes";
    const std::string coll = shell_collection(collection);
    f.suggestion =
        "Every write updates the index and it takes cache. Check $indexStats on every member "
        "(reads sent to secondaries count only there) over a span that includes rare jobs such "
        "as monthly reports, then hide it: " +
        coll + ".hideIndex(\"" + index.name + "\"), and drop it when nothing slowed: " + coll +
        ".dropIndex(\"" + index.name + "\").";
    out.push_back(std::move(f));
  }
}

std::vector<const QueryShapeCounter::Entry*> unserved_query_shapes(const QueryShapeCounter& shapes,
                                                                   const CollectionMetadata& m,
                                                                   uint64_t min_count) {
  std::vector<const QueryShapeCounter::Entry*> unserved;
  if (!index_list_known(m)) return unserved;
  for (const auto& [key, entry] : shapes.shapes()) {
    if (entry.count < min_count || uses_its_own_index(entry.shape) ||
        supported_by(entry.shape, m.indexes)) {
      continue;
    }
    unserved.push_back(&entry);
  }
  return unserved;
}

void detect_unindexed_queries(const std::string& db, const std::string& collection,
                              const QueryShapeCounter& shapes, const CollectionMetadata& m,
                              uint64_t min_count, std::vector<Finding>& out,
                              uint32_t sample_every) {
  std::vector<Unserved> unserved;
  for (const QueryShapeCounter::Entry* entry : unserved_query_shapes(shapes, m, min_count)) {
    unserved.push_back(Unserved{entry, suggest_index(entry->shape), {}});
  }
  // Longest suggestion first, so that a shape whose index leads another's folds into it.
  std::stable_sort(unserved.begin(), unserved.end(), [](const Unserved& a, const Unserved& b) {
    return a.keys.size() > b.keys.size();
  });
  std::vector<Unserved*> kept;
  for (Unserved& u : unserved) {
    const auto into = std::find_if(kept.begin(), kept.end(),
                                   [&](const Unserved* k) { return keys_lead(u.keys, k->keys); });
    if (into == kept.end()) {
      kept.push_back(&u);
    } else {
      (*into)->folded.push_back(u.entry);
    }
  }
  for (const Unserved* u : kept) {
    const QueryShape& shape = u->entry->shape;
    Finding f = index_finding(db, collection, m, Finding::Kind::kUnindexedQuery, Severity::kWarn,
                              shape.first_field());
    f.source = "traffic";
    f.evidence = "query shape `" + shape.key() + "` ran " +
                 runs_text(u->entry->count, sample_every) + "; no index starts with " +
                 wanted_first_keys(shape) + " (" + std::to_string(m.indexes.size()) +
                 (m.indexes.size() == 1 ? " index" : " indexes") + ")";
    for (const QueryShapeCounter::Entry* other : u->folded) {
      f.evidence += "; the same index serves `" + other->shape.key() + "` (" +
                    with_commas(other->count) + ")";
    }
    if (m.stats.known) {
      f.evidence += "; the collection holds " + with_commas(m.stats.documents) + " documents";
    }
    f.pattern = "index the query (equality, sort, range)";
    const bool has_or = has_skipped(shape, "$or");
    f.suggestion =
        std::string(has_or ? "Unless every $or clause has an index of its own, each " : "Each ") +
        "such query reads the whole collection" +
        (shape.sort.empty() ? "" : " and sorts the matches in memory") +
        ". Create the index with the equality fields first, then the sort, then the "
        "ranges: " +
        shell_collection(collection) + ".createIndex(" + index_keys_text(u->keys) + ").";
    if (!shape.skipped.empty()) {
      std::string skipped;
      for (const std::string& op : shape.skipped) skipped += (skipped.empty() ? "" : ", ") + op;
      f.suggestion += " Left out of the shape: " + skipped +
                      (has_or ? " (each $or clause needs an index of its own)." : ".");
    }
    out.push_back(std::move(f));
  }
}

}  // namespace docguard::advisor
