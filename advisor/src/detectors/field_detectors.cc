// Fields, indexes and metadata: bucket, attribute, unindexed reference, too many indexes,
// too many collections, missing validator; and the sorted run of every offline detector (the
// index and collection-shape detectors live in index_detectors.cc and
// collection_shape_detectors.cc).
#include <algorithm>
#include <map>

#include "docguard/advisor/bson_types.h"
#include "docguard/advisor/detectors.h"
#include "docguard/advisor/text_format.h"

namespace docguard::advisor {
namespace {

bool mostly_present(const FieldStats& field, uint64_t documents) {
  return field.documents * 10 >= documents * 9;
}

// The largest calendar unit that holds at most `target` readings of one key.
std::string bucket_span(double ms_per_reading, uint32_t target) {
  static constexpr std::pair<double, const char*> kUnits[] = {
      {30 * 86400e3, "month"}, {7 * 86400e3, "week"}, {86400e3, "day"}, {3600e3, "hour"}};
  for (const auto& [ms, name] : kUnits) {
    if (ms / ms_per_reading <= target) return name;
  }
  return "minute";
}

}  // namespace

void detect_bucket_candidates(const CollectionProfile& p, const AdvisorSettings& s,
                              std::vector<Finding>& out) {
  const uint64_t docs = p.documents();
  if (docs < s.bucket_min_documents || p.sizes().quantile(0.9) > s.bucket_max_p90_bytes) return;
  const FieldStats* time = nullptr;
  const FieldStats* key = nullptr;
  for (const FieldStats& field : p.fields()) {
    if (field.depth != 1 || !mostly_present(field, docs)) continue;
    if ((field.types & kDateBit) &&
        (!time || field.max_date - field.min_date > time->max_date - time->min_date)) {
      time = &field;
    }
    if (field.distinct && !field.distinct->saturated() && field.distinct->count() >= 1 &&
        static_cast<double>(field.distinct->count()) <=
            s.bucket_max_key_ratio * static_cast<double>(docs) &&
        (!key || field.reference > key->reference ||
         (field.reference == key->reference && field.distinct->count() > key->distinct->count()))) {
      key = &field;
    }
  }
  if (!time || !key) return;
  const uint64_t keys = key->distinct->count();
  const double per_key = static_cast<double>(docs) / static_cast<double>(keys);
  const int64_t span_ms = time->max_date - time->min_date;
  const double ms_per_reading = per_key > 1 ? static_cast<double>(span_ms) / (per_key - 1) : 0;
  std::string values;
  for (const FieldStats& field : p.fields()) {
    if (field.depth == 1 && &field != key && &field != time && field.path != "_id") {
      values += (values.empty() ? "" : ", ") + field.path;
    }
  }
  Finding f = new_finding(p, Finding::Kind::kBucket, Severity::kWarn, key->path);
  f.evidence = with_commas(docs) + " documents, p90 size " + human_bytes(p.sizes().quantile(0.9)) +
               " (tiny: <= " + human_bytes(s.bucket_max_p90_bytes) + "); " + with_commas(keys) +
               " distinct `" + key->path + "` (~" + with_commas(static_cast<uint64_t>(per_key)) +
               " documents each); `" + time->path + "` spans " + human_duration_ms(span_ms) +
               (ms_per_reading > 0 ? ", one reading per " + key->path + " every ~" +
                                         human_duration_ms(static_cast<int64_t>(ms_per_reading))
                                   : std::string());
  f.pattern = "bucket";
  const std::string span =
      ms_per_reading > 0 ? bucket_span(ms_per_reading, s.bucket_target_per_bucket) : "hour";
  f.suggestion =
      "One document per reading costs an _id, an index entry and document overhead "
      "for a few bytes of data. Group readings into one document per `" +
      key->path + "` per " + span + ": {" + key->path + ", start: <" + time->path +
      " truncated to the " + span + ">, count, readings: [{" + time->path +
      (values.empty() ? "" : ", " + values) +
      "}]} and push each new reading into "
      "the current bucket (upsert on {" +
      key->path + ", start}, with count < " + std::to_string(s.bucket_target_per_bucket) +
      "), or use a time-series "
      "collection with metaField `" +
      key->path + "` and timeField `" + time->path + "`.";
  out.push_back(std::move(f));
}

void detect_attribute_candidates(const CollectionProfile& p, const AdvisorSettings& s,
                                 std::vector<Finding>& out) {
  const uint64_t docs = p.documents();
  if (docs == 0) return;
  std::vector<const FieldStats*> sparse;
  for (const FieldStats& field : p.fields()) {
    if (field.depth == 1 && static_cast<double>(field.documents) <=
                                s.attribute_max_presence * static_cast<double>(docs)) {
      sparse.push_back(&field);
    }
  }
  if (sparse.size() < s.attribute_min_sparse_fields) return;
  // A prefix shared by the sparse names ("attr_") names what they are.
  std::string prefix = sparse.front()->path;
  for (const FieldStats* field : sparse) {
    size_t n = 0;
    while (n < prefix.size() && n < field->path.size() && prefix[n] == field->path[n]) ++n;
    prefix.resize(n);
  }
  std::string examples;
  for (size_t i = 0; i < sparse.size() && i < 3; ++i)
    examples += (i ? ", `" : "`") + sparse[i]->path + "`";
  Finding f = new_finding(p, Finding::Kind::kAttribute, Severity::kWarn,
                          prefix.empty() ? "" : prefix + "*");
  uint64_t presence_sum = 0;
  for (const FieldStats* field : sparse) presence_sum += field->documents;
  f.evidence = with_commas(sparse.size()) + " top-level field names each in <= " +
               std::to_string(static_cast<int>(s.attribute_max_presence * 100)) +
               "% of documents (threshold " + std::to_string(s.attribute_min_sparse_fields) +
               "); on average a document has " + with_commas(presence_sum / docs) +
               " of them; e.g. " + examples;
  f.pattern = "attribute";
  f.suggestion =
      "Every sparse field needs its own index to be searchable, and the set keeps "
      "growing. Move " +
      (prefix.empty() ? "them" : "the `" + prefix + "*` fields") +
      " into one array of key/value pairs, `attributes: [{k: \"" + sparse.front()->path +
      "\", v: ...}, ...]`, and create one index "
      "{\"attributes.k\": 1, \"attributes.v\": 1} that serves them all.";
  out.push_back(std::move(f));
}

void detect_unindexed_references(const CollectionProfile& p, const AdvisorSettings&,
                                 std::vector<Finding>& out) {
  // No index list (a lone .bson file, or listIndexes refused): nothing to compare against.
  if (!p.metadata().known || !p.metadata().indexes_known) return;
  for (const FieldStats& field : p.fields()) {
    // Top-level references are what a child collection is queried by; references inside
    // arrays (orders.items.productId) are usually read through their parent.
    if (!field.reference || field.depth != 1 || field.inside_array) continue;
    if (p.metadata().indexed_as_prefix(field.path)) continue;
    Finding f = new_finding(p, Finding::Kind::kUnindexedReference, Severity::kWarn, field.path);
    f.evidence = "reference field `" + field.path + "` (" + bson_type_list(field.types) + ") in " +
                 with_commas(field.documents) + " of " + with_commas(p.documents()) +
                 " documents; no index has it as its first key (" +
                 std::to_string(p.metadata().indexes.size()) + " indexes)";
    f.pattern = "index the reference";
    f.suggestion = "Every lookup of the `" + p.collection() + "` of one parent (a find by `" +
                   field.path + "` or a $lookup with foreignField `" + field.path +
                   "`) scans the whole collection. Create the index: db." + p.collection() +
                   ".createIndex({" + field.path + ": 1}).";
    out.push_back(std::move(f));
  }
}

void detect_too_many_indexes(const CollectionProfile& p, const AdvisorSettings& s,
                             std::vector<Finding>& out) {
  // An index list that could not be read is not an empty one, nor a short one.
  if (!p.metadata().known || !p.metadata().indexes_known) return;
  const size_t count = p.metadata().indexes.size();
  if (!p.metadata().indexes_known || count <= s.indexes_warn) return;
  Finding f = new_finding(p, Finding::Kind::kTooManyIndexes,
                          count > s.indexes_block ? Severity::kBlock : Severity::kWarn, "");
  f.source = metadata_finding_source(p.metadata());
  f.evidence = std::to_string(count) + " indexes (Compass flags > " +
               std::to_string(s.indexes_warn) + ", Atlas > " + std::to_string(s.indexes_block) +
               ", limit 64)";
  if (p.metadata().source == "cluster") f.source = "metadata";
  f.pattern = "attribute / compound indexes";
  f.suggestion =
      "Each index slows every write and takes cache. Drop unused ones ($indexStats), "
      "fold single-field indexes into compound indexes sharing a prefix, and if many "
      "indexes cover sparse fields, use the attribute pattern with one index.";
  out.push_back(std::move(f));
}

void detect_missing_validator(const CollectionProfile& p, const AdvisorSettings& s,
                              std::vector<Finding>& out) {
  const CollectionMetadata& m = p.metadata();
  if (!s.report_missing_validator || !m.known || m.has_validator || m.type == "view") return;
  Finding f = new_finding(p, Finding::Kind::kNoValidator, Severity::kInfo, "");
  f.evidence = "no validator in the collection's options";
  if (m.source == "cluster") f.source = "metadata";
  f.pattern = "schema validation";
  f.suggestion = "Let the server check what is settled: `docguard validator PATH " + p.ns() +
                 "` prints a collMod with a $jsonSchema (bsonType and required fields as seen in "
                 "every document, maxItems for arrays).";
  out.push_back(std::move(f));
}

void detect_too_many_collections(const std::vector<const CollectionProfile*>& profiles,
                                 const AdvisorSettings& s, std::vector<Finding>& out) {
  std::map<std::string, size_t> per_db;
  std::map<std::string, const char*> source_of_db;
  for (const CollectionProfile* p : profiles) {
    ++per_db[p->db()];
    source_of_db.emplace(p->db(), metadata_finding_source(p->metadata()));
  }
  // One finding for the deployment, one per crowded database: the same pattern, other reasons.
  auto add = [&out](std::string db, const char* source, std::string evidence,
                    const char* suggestion) {
    Finding f;
    f.db = std::move(db);
    f.kind = Finding::Kind::kTooManyCollections;
    f.severity = Severity::kWarn;
    f.source = source;
    f.evidence = std::move(evidence);
    f.pattern = "bucket / attribute (fewer, wider collections)";
    f.suggestion = suggestion;
    out.push_back(std::move(f));
  };
  if (profiles.size() > s.collections_cluster_warn) {
    add("", metadata_finding_source(profiles.front()->metadata()),
        with_commas(profiles.size()) + " collections in " + with_commas(per_db.size()) +
            (per_db.size() == 1 ? " database" : " databases") + " (MongoDB flags > " +
            with_commas(s.collections_cluster_warn) + " in one deployment)",
        "Each collection has at least two files (data and the _id index) and its own cache "
        "and catalog entries: startup, failover and backups slow down with their number. Merge "
        "collections of one shape into one with the distinguishing value as an indexed field, "
        "and drop the ones nothing reads.");
  }
  for (const auto& [db, count] : per_db) {
    if (count <= s.collections_warn) continue;
    add(db, source_of_db[db],
        std::to_string(count) + " collections in `" + db + "` (Atlas flags > " +
            std::to_string(s.collections_warn) + ")",
        "Many collections of one shape (one per customer, per day, per sensor) cost "
        "files, indexes and cache each. Merge them into one collection with the "
        "distinguishing value as an indexed field.");
  }
}

}  // namespace docguard::advisor
