// The live advisor's per-namespace state, shared by live_advisor.cc (what traffic feeds in) and
// live_findings.cc (what the detectors read). Private to the advisor library.
#pragma once

#include <map>
#include <set>
#include <string>

#include "docguard/advisor/collection_profile.h"
#include "docguard/advisor/live_advisor.h"

namespace docguard::advisor {

inline constexpr size_t kMaxKeys = 32;  // per map of one namespace (fields, pipelines, joins)
inline constexpr uint32_t kLargeDocumentBytes = 64 * 1024;
inline constexpr uint64_t kLargeDocumentSampling = 64;

struct LookupInfo {
  uint64_t count = 0;
  std::string local_field, foreign_field, as;
  // Fields of the joined collection the reads use: named in the join's pipeline, or projected
  // after it as `<as>.<field>`.
  std::set<std::string> used_fields;
};

struct LiveAdvisor::Namespace {
  Namespace(std::string db, std::string coll, const AdvisorSettings& s)
      : profile(std::move(db), std::move(coll), s) {}
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
  std::set<std::string> indexed;  // first keys of indexes known from createIndexes
  bool validator_known = false;
};

}  // namespace docguard::advisor
