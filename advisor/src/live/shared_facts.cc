#include "docguard/advisor/shared_facts.h"

#include <bson/bson.h>

#include <optional>
#include <string_view>

#include "docguard/codec/bson_view.h"

namespace docguard::advisor {
namespace {

void append_text(bson_t* doc, const char* key, std::string_view value) {
  bson_append_utf8(doc, key, -1, value.data(), static_cast<int>(value.size()));
}

void append_index(bson_t* array, const char* key, const IndexSpec& index) {
  bson_t doc, keys;
  bson_append_document_begin(array, key, -1, &doc);
  append_text(&doc, "name", index.name);
  // Key fields as documents, in order: not an array of pairs, which some servers (FerretDB
  // 1.x) refuse to store, nor a document, whose field names may hold dots.
  bson_append_array_begin(&doc, "keys", -1, &keys);
  for (size_t i = 0; i < index.keys.size(); ++i) {
    const std::string n = std::to_string(i);
    bson_t pair;
    bson_append_document_begin(&keys, n.c_str(), -1, &pair);
    append_text(&pair, "field", index.keys[i].first);
    append_text(&pair, "type", index.keys[i].second);
    bson_append_document_end(&keys, &pair);
  }
  bson_append_array_end(&doc, &keys);
  BSON_APPEND_BOOL(&doc, "unique", index.unique);
  BSON_APPEND_BOOL(&doc, "sparse", index.sparse);
  BSON_APPEND_BOOL(&doc, "partial", index.partial);
  BSON_APPEND_BOOL(&doc, "collation", index.collation);
  if (index.expire_after_seconds) {
    BSON_APPEND_INT64(&doc, "expireAfterSeconds", *index.expire_after_seconds);
  }
  if (index.accesses) BSON_APPEND_INT64(&doc, "accesses", static_cast<int64_t>(*index.accesses));
  bson_append_document_end(array, &doc);
}

void append_strings(bson_t* doc, const char* key, const std::vector<std::string>& values) {
  bson_t array;
  bson_append_array_begin(doc, key, -1, &array);
  for (size_t i = 0; i < values.size(); ++i)
    append_text(&array, std::to_string(i).c_str(), values[i]);
  bson_append_array_end(doc, &array);
}

// Calls `each` with an iterator over each element of the array or document `it` holds.
template <typename Each>
void each_child(const bson_iter_t* it, const Each& each) {
  bson_iter_t child;
  if (!(BSON_ITER_HOLDS_ARRAY(it) || BSON_ITER_HOLDS_DOCUMENT(it)) ||
      !bson_iter_recurse(it, &child)) {
    return;
  }
  while (bson_iter_next(&child)) each(&child);
}

IndexSpec read_index(const bson_iter_t* it) {
  IndexSpec index;
  each_child(it, [&](const bson_iter_t* field) {
    const std::string_view key = bson_iter_key(field);
    if (key == "name") index.name = codec::utf8_of(field);
    if (key == "keys") {
      each_child(field, [&](const bson_iter_t* pair) {
        std::string name, type;
        each_child(pair, [&](const bson_iter_t* part) {
          const std::string_view part_key = bson_iter_key(part);
          if (part_key == "field") name = codec::utf8_of(part);
          if (part_key == "type") type = codec::utf8_of(part);
        });
        if (!name.empty()) index.keys.emplace_back(name, type);
      });
    }
    if (key == "unique") index.unique = bson_iter_as_bool(field);
    if (key == "sparse") index.sparse = bson_iter_as_bool(field);
    if (key == "partial") index.partial = bson_iter_as_bool(field);
    if (key == "collation") index.collation = bson_iter_as_bool(field);
    if (key == "expireAfterSeconds") index.expire_after_seconds = bson_iter_as_int64(field);
    if (key == "accesses") index.accesses = static_cast<uint64_t>(bson_iter_as_int64(field));
  });
  return index;
}

void read_metadata(const bson_iter_t* it, CollectionMetadata* m) {
  each_child(it, [&](const bson_iter_t* field) {
    const std::string_view key = bson_iter_key(field);
    if (key == "db") m->db = codec::utf8_of(field);
    if (key == "collection") m->collection = codec::utf8_of(field);
    if (key == "known") m->known = bson_iter_as_bool(field);
    if (key == "type") m->type = codec::utf8_of(field);
    if (key == "capped") m->capped = bson_iter_as_bool(field);
    if (key == "indexes_known") m->indexes_known = bson_iter_as_bool(field);
    if (key == "index_usage_known") m->index_usage_known = bson_iter_as_bool(field);
    if (key == "has_validator") m->has_validator = bson_iter_as_bool(field);
    if (key == "validator_json") m->validator_json = codec::utf8_of(field);
    if (key == "validation_level") m->validation_level = codec::utf8_of(field);
    if (key == "validation_action") m->validation_action = codec::utf8_of(field);
    if (key == "source") m->source = codec::utf8_of(field);
    if (key == "sample_method") m->sample_method = codec::utf8_of(field);
    if (key == "indexes") {
      each_child(field, [&](const bson_iter_t* index) { m->indexes.push_back(read_index(index)); });
    }
    if (key == "unknown") {
      each_child(field,
                 [&](const bson_iter_t* line) { m->unknown.emplace_back(codec::utf8_of(line)); });
    }
    if (key == "stats") {
      each_child(field, [&](const bson_iter_t* stat) {
        const std::string_view name = bson_iter_key(stat);
        const auto value = static_cast<uint64_t>(bson_iter_as_int64(stat));
        if (name == "known") m->stats.known = bson_iter_as_bool(stat);
        if (name == "documents") m->stats.documents = value;
        if (name == "size_bytes") m->stats.size_bytes = value;
        if (name == "average_document_bytes") m->stats.average_document_bytes = value;
        if (name == "storage_bytes") m->stats.storage_bytes = value;
      });
    }
  });
}

// nullopt for a kind this build does not know: another instance may run a newer one.
std::optional<Finding> read_finding(const bson_iter_t* it) {
  Finding f;
  bool known_kind = false;
  each_child(it, [&](const bson_iter_t* field) {
    const std::string_view key = bson_iter_key(field);
    if (key == "db") f.db = codec::utf8_of(field);
    if (key == "collection") f.collection = codec::utf8_of(field);
    if (key == "kind") {
      const auto kind = kFindingKindNames.value(codec::utf8_of(field));
      if (kind) f.kind = *kind;
      known_kind = kind.has_value();
    }
    if (key == "severity") parse_severity(codec::utf8_of(field), &f.severity);
    if (key == "field") f.field = codec::utf8_of(field);
    if (key == "evidence") f.evidence = codec::utf8_of(field);
    if (key == "pattern") f.pattern = codec::utf8_of(field);
    if (key == "suggestion") f.suggestion = codec::utf8_of(field);
    if (key == "source") f.source = codec::utf8_of(field);
  });
  if (!known_kind) return std::nullopt;
  return f;
}

}  // namespace

std::vector<uint8_t> shared_collection_bson(const SharedCollection& shared) {
  const CollectionMetadata& m = shared.metadata;
  bson_t doc = BSON_INITIALIZER, meta, array, stats;
  append_text(&doc, "_id", m.db + "." + m.collection);
  bson_append_document_begin(&doc, "metadata", -1, &meta);
  append_text(&meta, "db", m.db);
  append_text(&meta, "collection", m.collection);
  BSON_APPEND_BOOL(&meta, "known", m.known);
  append_text(&meta, "type", m.type);
  BSON_APPEND_BOOL(&meta, "capped", m.capped);
  BSON_APPEND_BOOL(&meta, "indexes_known", m.indexes_known);
  BSON_APPEND_BOOL(&meta, "index_usage_known", m.index_usage_known);
  bson_append_array_begin(&meta, "indexes", -1, &array);
  for (size_t i = 0; i < m.indexes.size(); ++i) {
    append_index(&array, std::to_string(i).c_str(), m.indexes[i]);
  }
  bson_append_array_end(&meta, &array);
  BSON_APPEND_BOOL(&meta, "has_validator", m.has_validator);
  append_text(&meta, "validator_json", m.validator_json);
  append_text(&meta, "validation_level", m.validation_level);
  append_text(&meta, "validation_action", m.validation_action);
  bson_append_document_begin(&meta, "stats", -1, &stats);
  BSON_APPEND_BOOL(&stats, "known", m.stats.known);
  BSON_APPEND_INT64(&stats, "documents", static_cast<int64_t>(m.stats.documents));
  BSON_APPEND_INT64(&stats, "size_bytes", static_cast<int64_t>(m.stats.size_bytes));
  BSON_APPEND_INT64(&stats, "average_document_bytes",
                    static_cast<int64_t>(m.stats.average_document_bytes));
  BSON_APPEND_INT64(&stats, "storage_bytes", static_cast<int64_t>(m.stats.storage_bytes));
  bson_append_document_end(&meta, &stats);
  append_text(&meta, "source", m.source);
  append_text(&meta, "sample_method", m.sample_method);
  append_strings(&meta, "unknown", m.unknown);
  bson_append_document_end(&doc, &meta);
  bson_append_array_begin(&doc, "findings", -1, &array);
  for (size_t i = 0; i < shared.findings.size(); ++i) {
    const Finding& f = shared.findings[i];
    bson_t finding;
    bson_append_document_begin(&array, std::to_string(i).c_str(), -1, &finding);
    append_text(&finding, "db", f.db);
    append_text(&finding, "collection", f.collection);
    append_text(&finding, "kind", kind_name(f.kind));
    append_text(&finding, "severity", severity_name(f.severity));
    append_text(&finding, "field", f.field);
    append_text(&finding, "evidence", f.evidence);
    append_text(&finding, "pattern", f.pattern);
    append_text(&finding, "suggestion", f.suggestion);
    append_text(&finding, "source", f.source);
    bson_append_document_end(&array, &finding);
  }
  bson_append_array_end(&doc, &array);
  BSON_APPEND_INT64(&doc, "sampled_documents", static_cast<int64_t>(shared.sampled_documents));
  BSON_APPEND_DOUBLE(&doc, "read_at", shared.read_at);
  const uint8_t* data = bson_get_data(&doc);
  std::vector<uint8_t> out(data, data + doc.len);
  bson_destroy(&doc);
  return out;
}

base::Expected<void> read_shared_collection(const uint8_t* data, uint32_t size,
                                            SharedCollection* out) {
  bson_iter_t it;
  if (data == nullptr || !bson_iter_init_from_data(&it, data, size)) {
    return base::bad_input("not a BSON document");
  }
  bool has_metadata = false;
  while (bson_iter_next(&it)) {
    const std::string_view key = bson_iter_key(&it);
    if (key == "metadata" && BSON_ITER_HOLDS_DOCUMENT(&it)) {
      read_metadata(&it, &out->metadata);
      has_metadata = true;
    } else if (key == "findings") {
      each_child(&it, [&](const bson_iter_t* f) {
        if (auto finding = read_finding(f)) out->findings.push_back(std::move(*finding));
      });
    } else if (key == "sampled_documents") {
      out->sampled_documents = static_cast<uint64_t>(bson_iter_as_int64(&it));
    } else if (key == "read_at" && BSON_ITER_HOLDS_NUMBER(&it)) {
      out->read_at = bson_iter_as_double(&it);
    }
  }
  if (!has_metadata || out->metadata.db.empty() || out->metadata.collection.empty()) {
    return base::bad_input("not a collection's shared facts (no metadata with a namespace)");
  }
  return {};
}

}  // namespace docguard::advisor
