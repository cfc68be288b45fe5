// The live advisor's per-namespace state, shared by live_advisor.cc (what traffic feeds in) and
// live_findings.cc (what the detectors read). Private to the advisor library.
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/advisor/collection_profile.h"
#include "docguard/advisor/live_advisor.h"
#include "docguard/advisor/query_shape.h"
#include "docguard/codec/command_view.h"

namespace docguard::advisor {

inline constexpr size_t kMaxKeys = 32;  // per map of one namespace (fields, pipelines, joins)
inline constexpr uint32_t kLargeDocumentBytes = 64 * 1024;
inline constexpr uint64_t kLargeDocumentSampling = 64;

// Which client apps sent one kind of a namespace's sampled traffic, and how much: at most
// kMaxAppsPerNamespace by name, the rest under "_other" (the engine has already folded apps past
// tracking.max_apps into "_other" process-wide).
class AppCounts {
 public:
  static constexpr size_t kMaxAppsPerNamespace = 8;
  void count(std::string_view app) {
    if (app.empty()) return;  // a driver that sent no appName
    auto it = counts_.find(app);
    if (it == counts_.end()) {
      const std::string_view key = counts_.size() < kMaxAppsPerNamespace ? app : kOtherApp;
      it = counts_.try_emplace(std::string(key), 0).first;
    }
    ++it->second;
  }
  // The `max` apps that sent the most, most first (ties by name).
  std::vector<std::string> top(size_t max) const {
    std::vector<std::pair<uint64_t, std::string_view>> ranked;
    for (const auto& [app, n] : counts_) ranked.emplace_back(n, app);
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    std::vector<std::string> names;
    for (size_t i = 0; i < ranked.size() && i < max; ++i) names.emplace_back(ranked[i].second);
    return names;
  }

 private:
  static constexpr std::string_view kOtherApp = "_other";
  std::map<std::string, uint64_t, std::less<>> counts_;
};

struct LookupInfo {
  uint64_t count = 0;
  std::string local_field, foreign_field, as;
  // Fields of the joined collection the reads use: named in the join's pipeline, or projected
  // after it as `<as>.<field>`.
  std::set<std::string> used_fields;
};

struct LiveAdvisor::Namespace {
  Namespace(std::string db, std::string coll, const AdvisorSettings& s)
      : profile(db, coll, s), query_shapes(s.query_shapes_per_collection) {
    metadata.db = std::move(db);
    metadata.collection = std::move(coll);
    metadata.indexes_known = false;
    metadata.source = "traffic";
  }
  CollectionProfile profile;
  uint64_t writes = 0, inserts = 0, tiny_inserts = 0, large_documents = 0;
  double first_insert = 0, last_insert = 0;
  uint64_t reads = 0, reads_with_lookup = 0;
  std::map<std::string, uint64_t, std::less<>> unbounded_pushes;
  std::map<std::string, LookupInfo, std::less<>> lookups;       // by target collection
  std::map<uint64_t, std::pair<uint64_t, std::string>> groups;  // pipeline hash -> runs, keys
  uint64_t regex_i = 0;
  std::string regex_field;
  std::map<std::string, uint64_t, std::less<>> reference_filters;
  uint64_t projected_reads = 0;
  std::map<std::string, uint64_t, std::less<>> projected_fields;
  // Queries counted by shape (filter and sort), for the unindexed-query detector.
  QueryShapeCounter query_shapes;
  // The apps behind the sampled traffic: writes (inserts, updates, deletes), reads, and
  // $push/$addToSet without $slice.
  AppCounts write_apps, read_apps, push_apps;
  // What is known of the collection's kind, indexes, validator and statistics: from docguard's
  // own reads of the cluster, updated at once by catalog commands seen in traffic. With neither,
  // `known` and `indexes_known` are false and metadata.indexes holds what createIndexes traffic
  // showed.
  CollectionMetadata metadata;
  bool cluster_facts = false;  // metadata was read from the cluster at least once
  // The documents sampled from the collection in the last introspection pass (its metadata is
  // kept equal to `metadata`), and when they were read (Unix seconds).
  std::unique_ptr<CollectionProfile> stored;
  double read_at = 0;
  // Without a sample of its own: what the instance holding the introspection lease found in
  // its sample, and how many documents that was.
  std::vector<Finding> shared_findings;
  uint64_t shared_sampled_documents = 0;
  // Handed to the introspection for a read of its own (traffic reached it between passes).
  bool catch_up_asked = false;

  // After a change to `metadata`: the stored profile's detectors read the same facts.
  void metadata_changed() {
    if (stored) stored->set_metadata(metadata);
  }
};

// Statements of one update or delete batch whose query shapes are counted: a batch mostly
// repeats one shape, and walking a thousand filters would hold up the client's io thread.
inline constexpr size_t kMaxStatementShapes = 16;

// The query shapes a command runs, one per query: a find's filter and sort, an aggregate's
// leading $match and $sort, a count's or distinct's query, a findAndModify's query and sort, the
// `q` (and `sort`) of each of the first kMaxStatementShapes update or delete statements. Empty
// for other commands. Needs no lock: the caller builds them before taking the advisor's.
std::vector<QueryShape> command_query_shapes(const codec::CommandView& cmd);

}  // namespace docguard::advisor
