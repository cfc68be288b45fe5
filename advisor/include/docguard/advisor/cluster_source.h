// A live cluster as a source of collections and documents, read the way a dump is read: the
// visitor gets on_collection (metadata with source "cluster") and then on_document for each
// document read, so the scan's profiler, detectors and rule checks work unchanged.
//
// Used by `docguard scan mongodb://...` and by the proxy's periodic introspection; it prints
// nothing (progress and notes go to the callback) and runs entirely on the calling thread, one
// command at a time, paced by the reader's options.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "docguard/advisor/dump_reader.h"
#include "docguard/cluster/cluster_reader.h"

namespace docguard::advisor {

// Which namespaces to read, and how much of each.
struct ClusterSelection {
  std::string db;                // empty: the URI's database, or else every database
  std::string collection;        // empty: every collection of the database(s); needs a database
  uint64_t sample_size = 0;      // 0: every document (as mongodump); N: about N per collection
  size_t max_namespaces = 1000;  // collections read at most (views count)
  bool read_statistics = true;   // $collStats (or collStats)
  bool read_index_usage = true;  // $indexStats
  // Every database even when the URI names one: a proxy's upstream URI names the database its
  // users authenticate against, not the one to read.
  bool ignore_uri_database = false;
  // Databases never read, besides admin, local and config (the proxy's own lease database).
  std::vector<std::string> skip_databases;
};

struct ClusterReadOptions {
  cluster::ReaderOptions reader;
  ClusterSelection selection;
};

// What the callback hears. Documents are reported every `kProgressEvery` documents, so a caller
// can print a line per collection, or throttle to once a second.
struct ClusterProgress {
  enum class Event {
    kCollectionStarted,  // metadata read; documents next
    kDocuments,          // still reading this collection
    kCollectionDone,     // every document read
    kNote,               // something skipped or not known (note says what and why)
  };
  Event event = Event::kNote;
  std::string db;
  std::string collection;
  size_t namespace_number = 0;  // 1-based, over the whole read
  uint64_t documents = 0;       // read so far in this collection
  uint64_t bytes = 0;
  std::optional<uint64_t> expected_documents;  // the server's count, when known
  std::string method;                          // "$sample", "find", "all"
  std::string note;
};
inline constexpr uint64_t kProgressEvery = 10000;
using ClusterProgressCallback = std::function<void(const ClusterProgress&)>;

// Reads the selected namespaces with `reader`. For each collection: on_collection with what
// listCollections, listIndexes, the statistics and $indexStats said (facts that could not be read
// are listed in CollectionMetadata::unknown with the reason, never taken as absent), then
// on_document for each document read. on_collection is called a second time for a collection whose
// documents were read by another method than announced (the server refused $sample) or could not be
// read. Views get on_collection only; admin, local, config and system.* are skipped. An error when
// nothing could be listed, the server went away, the stop flag was set, or the visitor refused a
// document. A collection that cannot be read is a note, not an error.
cluster::Expected<void> read_cluster(cluster::ClusterReader& reader,
                                     const ClusterSelection& selection, DumpVisitor& visitor,
                                     const ClusterProgressCallback& progress = {});
// The same with a reader of its own (opened and closed here).
cluster::Expected<void> read_cluster(const ClusterReadOptions& options, DumpVisitor& visitor,
                                     const ClusterProgressCallback& progress = {});

}  // namespace docguard::advisor
