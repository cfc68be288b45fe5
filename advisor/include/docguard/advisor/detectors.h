// Detectors that need only documents and metadata (what a dump holds). Each reads profiles and
// appends findings; none of them looks at traffic (the live phase adds $lookup, $group and
// $regex detectors beside these).
#pragma once

#include <vector>

#include "docguard/advisor/collection_profile.h"
#include "docguard/advisor/finding.h"
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
// Database-wide: more collections in one database than the threshold.
void detect_too_many_collections(const std::vector<const CollectionProfile*>& profiles,
                                 const AdvisorSettings& s, std::vector<Finding>& out);

// Every offline detector over every profile, sorted.
// A finding about collection `p`, its evidence and advice still to be filled in by the detector.
Finding new_finding(const CollectionProfile& p, const char* kind, Severity severity,
                    std::string field);

std::vector<Finding> run_offline_detectors(const std::vector<const CollectionProfile*>& profiles,
                                           const AdvisorSettings& settings);

}  // namespace docguard::advisor
