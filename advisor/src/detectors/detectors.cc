// What every detector shares: a finding about a collection, and the detectors run over a
// profile (documents only) or over a whole offline scan (documents and metadata).
#include "docguard/advisor/detectors.h"

#include <utility>

namespace docguard::advisor {

Finding new_finding(const CollectionProfile& p, Finding::Kind kind, Severity severity,
                    std::string field) {
  Finding f;
  f.db = p.db();
  f.collection = p.collection();
  f.kind = kind;
  f.severity = severity;
  f.field = std::move(field);
  // Documents read from a cluster may be a sample; a dump holds them all.
  if (p.metadata().source == "cluster") f.source = "sample";
  return f;
}

void run_document_detectors(const CollectionProfile& p, const AdvisorSettings& settings,
                            std::vector<Finding>& out) {
  detect_large_arrays(p, settings, out);
  detect_outliers(p, settings, out);
  detect_bucket_candidates(p, settings, out);
  detect_bloated_documents(p, settings, out);
  detect_attribute_candidates(p, settings, out);
  detect_deep_nesting(p, settings, out);
}

std::vector<Finding> run_offline_detectors(const std::vector<const CollectionProfile*>& profiles,
                                           const AdvisorSettings& settings) {
  std::vector<Finding> out;
  for (const CollectionProfile* p : profiles) {
    run_document_detectors(*p, settings, out);
    detect_unindexed_references(*p, settings, out);
    detect_too_many_indexes(*p, settings, out);
    detect_redundant_indexes(p->db(), p->collection(), p->metadata(), out);
    detect_unused_indexes(p->db(), p->collection(), p->metadata(), out);
    detect_missing_validator(*p, settings, out);
  }
  detect_too_many_collections(profiles, settings, out);
  detect_same_shape_collections(profiles, settings, out);
  sort_findings(out);
  return out;
}

}  // namespace docguard::advisor
