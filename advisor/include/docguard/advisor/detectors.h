// Detectors that need only documents and metadata (what a dump holds), and the index detectors
// that also take query shapes counted from traffic. Each appends findings; the live phase adds
// its $lookup, $group and $regex detectors beside these.
#pragma once

#include <string>
#include <vector>

#include "docguard/advisor/collection_profile.h"
#include "docguard/advisor/finding.h"
#include "docguard/advisor/query_shape.h"
#include "docguard/advisor/settings.h"

namespace docguard::advisor {

void detect_large_arrays(const CollectionProfile& p, const AdvisorSettings& s,
                         std::vector<Finding>& out);
void detect_outliers(const CollectionProfile& p, const AdvisorSettings& s,
                     std::vector<Finding>& out);
void detect_bucket_candidates(const CollectionProfile& p, const AdvisorSettings& s,
                              std::vector<Finding>& out);
void detect_bloated_documents(const CollectionProfile& p, const AdvisorSettings& s,
                              std::vector<Finding>& out);
void detect_attribute_candidates(const CollectionProfile& p, const AdvisorSettings& s,
                                 std::vector<Finding>& out);
void detect_unindexed_references(const CollectionProfile& p, const AdvisorSettings& s,
                                 std::vector<Finding>& out);
void detect_too_many_indexes(const CollectionProfile& p, const AdvisorSettings& s,
                             std::vector<Finding>& out);
void detect_deep_nesting(const CollectionProfile& p, const AdvisorSettings& s,
                         std::vector<Finding>& out);
void detect_missing_validator(const CollectionProfile& p, const AdvisorSettings& s,
                              std::vector<Finding>& out);
// Database-wide: more collections in one database than collections_warn; deployment-wide: more
// in all the profiles' databases together than collections_cluster_warn.
void detect_too_many_collections(const std::vector<const CollectionProfile*>& profiles,
                                 const AdvisorSettings& s, std::vector<Finding>& out);
// Database-wide: at least same_shape_min_collections collections of one database with the same
// settled top-level fields (one collection per tenant, per day, per sensor).
void detect_same_shape_collections(const std::vector<const CollectionProfile*>& profiles,
                                   const AdvisorSettings& s, std::vector<Finding>& out);

// Index detectors over a collection's metadata alone, so that the live advisor can call them
// with what it read from the cluster as well as the offline scan with a dump's metadata.json.
// None of them fires unless the index list is known (metadata.known and indexes_known): an index
// list that could not be read is never taken as empty. Views have no indexes of their own and
// are skipped.
//
// An index whose keys are the leading keys of another index (same directions, or all reversed).
void detect_redundant_indexes(const std::string& db, const std::string& collection,
                              const CollectionMetadata& metadata, std::vector<Finding>& out);
// An index with 0 accesses in $indexStats (only while index_usage_known).
void detect_unused_indexes(const std::string& db, const std::string& collection,
                           const CollectionMetadata& metadata, std::vector<Finding>& out);
// Query shapes seen at least `min_count` times that no index serves (supported_by), each with
// the index to create in equality-sort-range order. A shape whose suggested index leads another
// flagged shape's is folded into that finding (one index serves both). Shapes with $text or
// $near are left alone: those fail without their own index, so they ran on one. `sample_every`:
// the shapes were counted on 1 in this many commands, which the evidence says (1: every one).
void detect_unindexed_queries(const std::string& db, const std::string& collection,
                              const QueryShapeCounter& shapes, const CollectionMetadata& metadata,
                              uint64_t min_count, std::vector<Finding>& out,
                              uint32_t sample_every = 1);
// The counted shapes detect_unindexed_queries reports, each in a finding of its own or folded
// into another's: seen at least `min_count` times, served by no index, not $text or $near. Empty
// unless the index list is known. The pointers are into `shapes`.
std::vector<const QueryShapeCounter::Entry*> unserved_query_shapes(
    const QueryShapeCounter& shapes, const CollectionMetadata& metadata, uint64_t min_count);

// What a finding about indexes or collection counts rests on: "dump" for a dump's metadata.json,
// "traffic" for indexes seen in createIndexes commands, "metadata" for the cluster's replies.
const char* metadata_finding_source(const CollectionMetadata& metadata);

// A finding about collection `p`, its evidence and advice still to be filled in by the detector.
Finding new_finding(const CollectionProfile& p, Finding::Kind kind, Severity severity,
                    std::string field);

// The detectors that read documents only (arrays, outliers, buckets, size, attributes,
// nesting): what a sample of a collection shows.
void run_document_detectors(const CollectionProfile& p, const AdvisorSettings& settings,
                            std::vector<Finding>& out);

// Every offline detector over every profile, sorted.
std::vector<Finding> run_offline_detectors(const std::vector<const CollectionProfile*>& profiles,
                                           const AdvisorSettings& settings);

}  // namespace docguard::advisor
