#include "docguard/advisor/cluster_source.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "docguard/advisor/cluster_metadata.h"

namespace docguard::advisor {
namespace {

using cluster::ClusterReader;
using cluster::Error;
using cluster::ErrorKind;
using cluster::ErrorSource;
using cluster::Expected;

bool is_system_database(const std::string& db) {
  return db == "admin" || db == "local" || db == "config";
}

bool is_system_collection(const std::string& name) { return name.rfind("system.", 0) == 0; }

// Failures that end the whole read rather than one fact of one collection.
bool is_fatal(const Error& error) {
  return error.kind == ErrorKind::kStopped || error.kind == ErrorKind::kConnect ||
         error.kind == ErrorKind::kNetwork || error.kind == ErrorKind::kConfiguration;
}

// "indexes: not authorized on shop to execute command ... (code 13)"
std::string unknown_line(const char* fact, const Error& error) {
  return std::string(fact) + ": " + error.message;
}

class Reading {
 public:
  Reading(ClusterReader& reader, const ClusterSelection& selection, DumpVisitor& visitor,
          const ClusterProgressCallback& progress)
      : reader_(reader), selection_(selection), visitor_(visitor), progress_(progress) {}

  Expected<void> run() {
    std::vector<std::string> databases;
    const std::string db = !selection_.db.empty() || selection_.ignore_uri_database
                               ? selection_.db
                               : reader_.uri_database();
    if (!db.empty()) {
      databases.push_back(db);
    } else if (!selection_.collection.empty()) {
      return Error{ErrorKind::kBadInput, ErrorSource::kConfiguration,
                   "a collection needs its database (--db, or the URI's /database)"};
    } else {
      auto listed = reader_.list_databases();
      if (!listed) return listed.error();
      databases = std::move(listed.value());
      std::sort(databases.begin(), databases.end());
    }
    const bool one_database = databases.size() == 1;
    for (const std::string& name : databases) {
      if (is_system_database(name)) {
        note(name, "", "skipped: a system database");
        continue;
      }
      if (std::find(selection_.skip_databases.begin(), selection_.skip_databases.end(), name) !=
          selection_.skip_databases.end()) {
        note(name, "", "skipped: docguard's own database");
        continue;
      }
      auto entries = reader_.list_collections(name);
      if (!entries) {
        if (one_database || is_fatal(entries.error())) return entries.error();
        note(name, "", "skipped: " + entries.error().message);
        continue;
      }
      if (auto read = read_database(name, entries.value()); !read) return read;
      if (stopped_at_limit_) break;
    }
    return {};
  }

 private:
  Expected<void> read_database(const std::string& db,
                               const std::vector<ClusterReader::Document>& entries) {
    std::vector<CollectionMetadata> collections;
    for (const auto& entry : entries) {
      CollectionMetadata metadata;
      metadata.db = db;
      metadata.source = "cluster";
      if (auto applied = apply_collection_entry(entry, &metadata); !applied) {
        note(db, "", "a listCollections entry skipped: " + applied.error().message);
        continue;
      }
      if (is_system_collection(metadata.collection)) continue;
      if (!selection_.collection.empty() && metadata.collection != selection_.collection) continue;
      collections.push_back(std::move(metadata));
    }
    if (!selection_.collection.empty() && collections.empty()) {
      return Error{ErrorKind::kNotFound, ErrorSource::kUpstream,
                   "no collection " + db + "." + selection_.collection};
    }
    std::sort(collections.begin(), collections.end(),
              [](const auto& a, const auto& b) { return a.collection < b.collection; });
    for (CollectionMetadata& metadata : collections) {
      if (namespaces_ == selection_.max_namespaces) {
        note(db, "",
             "stopped after " + std::to_string(namespaces_) +
                 " collections (the most one read takes)");
        stopped_at_limit_ = true;
        return {};
      }
      ++namespaces_;
      if (auto read = read_collection(metadata); !read) return read;
    }
    return {};
  }

  Expected<void> read_collection(CollectionMetadata& m) {
    if (m.is_view()) {
      visitor_.on_collection(m);  // a view has no documents or indexes of its own
      return {};
    }
    if (auto read = read_facts(m); !read) return read;
    m.sample_method = selection_.sample_size == 0 ? "all" : m.is_timeseries() ? "find" : "$sample";
    visitor_.on_collection(m);

    ClusterProgress p = event(ClusterProgress::Event::kCollectionStarted, m);
    if (m.stats.known) p.expected_documents = m.stats.documents;
    report(p);
    std::optional<base::Error> refused;  // why the visitor stopped the read
    auto method = reader_.read_documents(
        m.db, m.collection, selection_.sample_size,
        [&](const uint8_t* data, uint32_t size) {
          ++p.documents;
          p.bytes += size;
          if (auto visited = visitor_.on_document(m.db, m.collection, data, size); !visited) {
            refused = visited.error();
            return false;
          }
          if (p.documents % kProgressEvery == 0) {
            p.event = ClusterProgress::Event::kDocuments;
            report(p);
          }
          return true;
        },
        m.is_timeseries());
    if (refused) {
      return Error{ErrorKind::kBadInput, ErrorSource::kDocguard,
                   m.db + "." + m.collection + ": " + refused->message};
    }
    if (!method) {
      if (is_fatal(method.error())) return method.error();
      m.unknown.push_back(unknown_line("documents", method.error()));
      visitor_.on_collection(m);
      note(m.db, m.collection, m.unknown.back());
      return {};
    }
    if (cluster::read_method_name(*method) != m.sample_method) {
      m.sample_method = cluster::read_method_name(*method);
      visitor_.on_collection(m);
    }
    p.event = ClusterProgress::Event::kCollectionDone;
    p.method = m.sample_method;
    report(p);
    return {};
  }

  // Indexes, statistics and index usage; a fact that cannot be read is noted as unknown.
  Expected<void> read_facts(CollectionMetadata& m) {
    auto indexes = reader_.list_indexes(m.db, m.collection);
    if (!indexes && is_fatal(indexes.error())) return indexes.error();
    if (!indexes) {
      m.indexes_known = false;
      m.unknown.push_back(unknown_line("indexes", indexes.error()));
    } else if (auto applied = apply_index_documents(indexes.value(), &m); !applied) {
      m.indexes_known = false;
      m.unknown.push_back("indexes: " + applied.error().message);
    }
    if (selection_.read_statistics) {
      auto stats = reader_.collection_stats(m.db, m.collection);
      if (!stats && is_fatal(stats.error())) return stats.error();
      if (!stats) {
        m.unknown.push_back(unknown_line("statistics", stats.error()));
      } else if (auto applied = apply_collection_stats(stats.value(), &m); !applied) {
        m.unknown.push_back("statistics: " + applied.error().message);
      }
    }
    if (selection_.read_index_usage && m.indexes_known) {
      auto usage = reader_.index_stats(m.db, m.collection);
      if (!usage && is_fatal(usage.error())) return usage.error();
      if (!usage) {
        m.unknown.push_back(unknown_line("index usage", usage.error()));
      } else if (auto applied = apply_index_stats(usage.value(), &m); !applied) {
        m.unknown.push_back("index usage: " + applied.error().message);
      }
    }
    return {};
  }

  ClusterProgress event(ClusterProgress::Event kind, const CollectionMetadata& m) const {
    ClusterProgress p;
    p.event = kind;
    p.db = m.db;
    p.collection = m.collection;
    p.namespace_number = namespaces_;
    p.method = m.sample_method;
    return p;
  }

  void note(const std::string& db, const std::string& collection, std::string text) {
    ClusterProgress p;
    p.event = ClusterProgress::Event::kNote;
    p.db = db;
    p.collection = collection;
    p.namespace_number = namespaces_;
    p.note = std::move(text);
    report(p);
  }

  void report(const ClusterProgress& p) const {
    if (progress_) progress_(p);
  }

  ClusterReader& reader_;
  const ClusterSelection& selection_;
  DumpVisitor& visitor_;
  const ClusterProgressCallback& progress_;
  size_t namespaces_ = 0;
  bool stopped_at_limit_ = false;
};

}  // namespace

Expected<void> read_cluster(ClusterReader& reader, const ClusterSelection& selection,
                            DumpVisitor& visitor, const ClusterProgressCallback& progress) {
  return Reading(reader, selection, visitor, progress).run();
}

Expected<void> read_cluster(const ClusterReadOptions& options, DumpVisitor& visitor,
                            const ClusterProgressCallback& progress) {
  auto reader = ClusterReader::open(options.reader);
  if (!reader) return reader.error();
  return read_cluster(*reader.value(), options.selection, visitor, progress);
}

}  // namespace docguard::advisor
