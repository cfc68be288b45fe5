// The live advisor's findings that rest on catalog facts as well as traffic: query shapes, joins
// and reference filters no index serves, redundant and unused indexes, and collections whose
// writes no validator checks. Facts come from the cluster (introspection) or from catalog
// commands seen in traffic; a fact that is not known is never taken as absent.
#include <algorithm>
#include <set>

#include "docguard/advisor/detectors.h"
#include "docguard/advisor/live_advisor.h"
#include "docguard/advisor/text_format.h"
#include "live_state.h"

namespace docguard::advisor {
namespace {

// Whether `field` of a collection can be judged unindexed, and how the evidence says so. With
// introspection on, a collection whose indexes are not known yet is not judged.
struct IndexVerdict {
  bool judged = false;
  bool indexed = false;
  std::string why;
};

IndexVerdict index_verdict(const LiveAdvisor::Namespace* ns, const std::string& field,
                           bool expect_cluster_facts) {
  IndexVerdict v;
  if (ns != nullptr && ns->metadata.indexes_known) {
    v.judged = true;
    v.indexed = ns->metadata.indexed_as_prefix(field);
    v.why = "no index starts with it (" + std::to_string(ns->metadata.indexes.size()) +
            " indexes known, from " +
            (ns->cluster_facts ? std::string("the cluster") : std::string("traffic")) + ")";
    return v;
  }
  if (expect_cluster_facts) return v;
  v.judged = true;
  v.indexed = ns != nullptr && ns->metadata.indexed_as_prefix(field);
  v.why = "no index on it seen in createIndexes traffic";
  return v;
}

// The metadata to judge a collection's query shapes against, by index_verdict's rule: its index
// list when known; without cluster facts expected, the indexes createIndexes traffic showed,
// taken as the whole list (`traffic_only` then says so); otherwise none (false).
bool judged_metadata(const LiveAdvisor::Namespace& ns, bool expect_cluster_facts,
                     CollectionMetadata* judged, bool* traffic_only) {
  *judged = ns.metadata;
  *traffic_only = !judged->indexes_known;
  if (*traffic_only) {
    if (expect_cluster_facts) return false;
    judged->indexes_known = true;
    // Every collection has the _id index, so traffic need not have created it: without it, each
    // find by _id would look unindexed.
    if (!judged->indexed_as_prefix("_id")) {
      judged->indexes.push_back(IndexSpec{.name = "_id_", .keys = {{"_id", "1"}}});
    }
  }
  // Index facts without collection facts (a listIndexes reply, no listCollections) still say
  // which indexes exist; the detectors want both.
  judged->known = true;
  return true;
}

}  // namespace

// Query shapes no index serves. Returns the equality fields of the shapes reported, so that the
// reference filters they cover are not reported a second time.
std::set<std::string> LiveAdvisor::detect_unindexed_queries_locked(
    const Namespace& ns, const TrafficShapes& shapes, std::vector<Finding>& out) const {
  std::set<std::string> covered;
  CollectionMetadata judged;
  bool traffic_only = false;
  if (!judged_metadata(ns, expect_cluster_facts_, &judged, &traffic_only)) return covered;
  // The ledger's counts are exact; the namespace's own are in sampled units, as the threshold is.
  const uint32_t sample_every = std::max<uint32_t>(settings_.live_sample_every, 1);
  const QueryShapeCounter* counted = &ns.query_shapes;
  uint64_t min_count = settings_.unindexed_query_min;
  if (shapes.from_ledger) {
    static const QueryShapeCounter kNone(0);
    const auto it = shapes.by_namespace.find(ns.profile.db() + "." + ns.profile.collection());
    counted = it == shapes.by_namespace.end() ? &kNone : &it->second;
    min_count *= sample_every;
  }
  const size_t first = out.size();
  detect_unindexed_queries(ns.profile.db(), ns.profile.collection(), *counted, judged, min_count,
                           out, shapes.from_ledger ? 1 : sample_every);
  for (size_t i = first; i < out.size(); ++i) {
    out[i].source = "traffic";
    if (traffic_only) {
      out[i].evidence +=
          "; the indexes are the _id index and only those seen in createIndexes traffic "
          "(docguard has not read the collection's index list)";
    }
  }
  for (const QueryShapeCounter::Entry* entry : unserved_query_shapes(*counted, judged, min_count)) {
    covered.insert(entry->shape.equality.begin(), entry->shape.equality.end());
  }
  return covered;
}

// Redundant and unused indexes, once the cluster gave the collection's index list (and
// $indexStats): indexes seen in traffic alone may be missing the ones that make others redundant.
void LiveAdvisor::detect_index_list_locked(const Namespace& ns, std::vector<Finding>& out) const {
  if (!ns.cluster_facts) return;
  const size_t first = out.size();
  detect_redundant_indexes(ns.profile.db(), ns.profile.collection(), ns.metadata, out);
  detect_unused_indexes(ns.profile.db(), ns.profile.collection(), ns.metadata, out);
  for (size_t i = first; i < out.size(); ++i) out[i].source = "metadata";
}

void LiveAdvisor::detect_unindexed_locked(const Namespace& ns, const TrafficShapes& shapes,
                                          std::vector<Finding>& out) const {
  const AdvisorSettings& s = settings_;
  const CollectionProfile& p = ns.profile;
  // $lookup foreignFields, judged on the joined collection.
  for (const auto& [from, info] : ns.lookups) {
    if (info.foreign_field.empty() || info.foreign_field == "_id") continue;
    auto target = namespaces_.find(p.db() + "." + from);
    const IndexVerdict v =
        index_verdict(target == namespaces_.end() ? nullptr : target->second.get(),
                      info.foreign_field, expect_cluster_facts_);
    if (!v.judged || v.indexed) continue;
    Finding f;
    f.db = p.db();
    f.collection = from;
    f.kind = Finding::Kind::kUnindexedReference;
    f.severity = Severity::kWarn;
    f.field = info.foreign_field;
    f.source = "traffic";
    f.evidence = "$lookup from `" + p.collection() + "` matches `" + from + "." +
                 info.foreign_field + "` " + with_commas(info.count) + " times (sampled); " + v.why;
    f.pattern = "index the reference";
    f.suggestion = "Each joined document scans `" + from + "`. Create the index: db." + from +
                   ".createIndex({" + info.foreign_field + ": 1}).";
    out.push_back(std::move(f));
  }
  // Equality filters on references here, unless a query shape with them is reported: its
  // compound index serves these filters too and is the better advice.
  const std::set<std::string> covered = detect_unindexed_queries_locked(ns, shapes, out);
  for (const auto& [field, count] : ns.reference_filters) {
    if (count < s.reference_filter_min || covered.count(field) != 0) continue;
    const IndexVerdict v = index_verdict(&ns, field, expect_cluster_facts_);
    if (!v.judged || v.indexed) continue;
    Finding f = new_finding(p, Finding::Kind::kUnindexedReference, Severity::kWarn, field);
    f.source = "traffic";
    f.evidence = with_commas(count) + " equality filters on reference `" + field +
                 "` (sampled, threshold " + with_commas(s.reference_filter_min) + "); " + v.why;
    f.pattern = "index the reference";
    f.suggestion = "Every find by `" + field + "` scans `" + p.collection() +
                   "`. Create the index: db." + p.collection() + ".createIndex({" + field +
                   ": 1}).";
    out.push_back(std::move(f));
  }
}

void LiveAdvisor::detect_validator_locked(const Namespace& ns, std::vector<Finding>& out) const {
  if (!settings_.report_missing_validator) return;
  const CollectionMetadata& m = ns.metadata;
  const CollectionProfile& p = ns.profile;
  const char* source = ns.cluster_facts ? "metadata" : "traffic";
  if (m.known) {
    if (m.is_view()) return;
    if (!m.has_validator) {
      if (!ns.cluster_facts && ns.writes == 0) return;
      Finding f = new_finding(p, Finding::Kind::kNoValidator, Severity::kInfo, "");
      f.source = source;
      f.evidence = std::string("no validator in the collection's options (") +
                   (ns.cluster_facts ? "listCollections" : "its create command") + ")" +
                   (ns.writes ? "; " + with_commas(ns.writes) + " writes (sampled)" : "");
      f.pattern = "schema validation";
      f.suggestion =
          "Let the server check what is settled: the validator section of this report "
          "(or `docguard validator`) gives a collMod with a $jsonSchema.";
      out.push_back(std::move(f));
      return;
    }
    const bool warn_only = m.validation_action == "warn";
    const bool off = m.validation_level == "off";
    if (!warn_only && !off) return;
    Finding f = new_finding(p, Finding::Kind::kValidatorNotEnforced, Severity::kInfo, "");
    f.source = source;
    f.evidence = off ? "the validator exists but validationLevel is off: nothing is checked"
                     : "the validator only warns (validationAction: warn): documents that fail "
                       "it are written and logged by the server";
    f.pattern = "schema validation";
    f.suggestion = "Once the stored documents pass it, enforce it: db.runCommand({collMod: \"" +
                   p.collection() +
                   "\", validationLevel: \"strict\", validationAction: \"error\"}).";
    out.push_back(std::move(f));
    return;
  }
  // Nothing known of the options: judged from traffic alone only without introspection.
  if (expect_cluster_facts_ || ns.writes == 0) return;
  Finding f = new_finding(p, Finding::Kind::kNoValidator, Severity::kInfo, "");
  f.source = "traffic";
  f.evidence = with_commas(ns.writes) + (ns.writes == 1 ? " write" : " writes") +
               " (sampled); no validator seen in create/collMod traffic";
  f.pattern = "schema validation";
  f.suggestion =
      "Let the server check what is settled: the validator section of this report "
      "(or `docguard validator` on a dump) gives a collMod with a $jsonSchema.";
  out.push_back(std::move(f));
}

}  // namespace docguard::advisor
