#include "docguard/advisor/shared_facts.h"

#include <bson/bson.h>

#include <optional>
#include <string_view>

#include "docguard/advisor/catalog_documents.h"
#include "docguard/codec/bson_elements.h"

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
void each_child(const codec::BsonElements& it, const Each& each) {
  codec::BsonElements child(it.container());  // empty for a value that holds neither
  while (child.next()) each(child);
}

IndexSpec read_index(const codec::BsonElements& it) {
  IndexSpec index;
  each_child(it, [&](const codec::BsonElements& field) {
    const std::string_view key = field.key;
    if (key == "name") index.name = field.utf8();
    if (key == "keys") {
      each_child(field, [&](const codec::BsonElements& pair) {
        std::string name, type;
        each_child(pair, [&](const codec::BsonElements& part) {
          const std::string_view part_key = part.key;
          if (part_key == "field") name = part.utf8();
          if (part_key == "type") type = part.utf8();
        });
        if (!name.empty()) index.keys.emplace_back(name, type);
      });
    }
    if (key == "unique") index.unique = field.as_bool();
    if (key == "sparse") index.sparse = field.as_bool();
    if (key == "partial") index.partial = field.as_bool();
    if (key == "collation") index.collation = field.as_bool();
    if (key == "expireAfterSeconds") index.expire_after_seconds = field.as_int64();
    if (key == "accesses") index.accesses = static_cast<uint64_t>(field.as_int64());
  });
  return index;
}

void read_metadata(const codec::BsonElements& it, CollectionMetadata* m) {
  each_child(it, [&](const codec::BsonElements& field) {
    const std::string_view key = field.key;
    if (key == "db") m->db = field.utf8();
    if (key == "collection") m->collection = field.utf8();
    if (key == "known") m->known = field.as_bool();
    if (key == "type") m->type = field.utf8();
    if (key == "capped") m->capped = field.as_bool();
    if (key == "indexes_known") m->indexes_known = field.as_bool();
    if (key == "index_usage_known") m->index_usage_known = field.as_bool();
    if (key == "has_validator") m->has_validator = field.as_bool();
    if (key == "validator_json") m->validator_json = field.utf8();
    if (key == "validation_level") m->validation_level = field.utf8();
    if (key == "validation_action") m->validation_action = field.utf8();
    if (key == "source") m->source = field.utf8();
    if (key == "sample_method") m->sample_method = field.utf8();
    if (key == "indexes") {
      each_child(field, [&](const codec::BsonElements& index) {
        m->indexes.push_back(read_index(index));
      });
    }
    if (key == "unknown") {
      each_child(field,
                 [&](const codec::BsonElements& line) { m->unknown.emplace_back(line.utf8()); });
    }
    if (key == "stats") {
      each_child(field, [&](const codec::BsonElements& stat) {
        const std::string_view name = stat.key;
        const auto value = static_cast<uint64_t>(stat.as_int64());
        if (name == "known") m->stats.known = stat.as_bool();
        if (name == "documents") m->stats.documents = value;
        if (name == "size_bytes") m->stats.size_bytes = value;
        if (name == "average_document_bytes") m->stats.average_document_bytes = value;
        if (name == "storage_bytes") m->stats.storage_bytes = value;
      });
    }
  });
}

// nullopt for a kind this build does not know: another instance may run a newer one.
std::optional<Finding> read_finding(const codec::BsonElements& it) {
  Finding f;
  bool known_kind = false;
  each_child(it, [&](const codec::BsonElements& field) {
    const std::string_view key = field.key;
    if (key == "db") f.db = field.utf8();
    if (key == "collection") f.collection = field.utf8();
    if (key == "kind") {
      const auto kind = finding_kind_named(field.utf8());
      if (kind) f.kind = *kind;
      known_kind = kind.has_value();
    }
    if (key == "severity") parse_severity(field.utf8(), &f.severity);
    if (key == "field") f.field = field.utf8();
    if (key == "evidence") f.evidence = field.utf8();
    if (key == "pattern") f.pattern = field.utf8();
    if (key == "suggestion") f.suggestion = field.utf8();
    if (key == "source") f.source = field.utf8();
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
  if (!framed_document(data, size)) return base::bad_input("not a BSON document");
  codec::BsonElements it(data, size);
  bool has_metadata = false;
  while (it.next()) {
    const std::string_view key = it.key;
    if (key == "metadata" && it.holds_document()) {
      read_metadata(it, &out->metadata);
      has_metadata = true;
    } else if (key == "findings") {
      each_child(it, [&](const codec::BsonElements& f) {
        if (auto finding = read_finding(f)) out->findings.push_back(std::move(*finding));
      });
    } else if (key == "sampled_documents") {
      out->sampled_documents = static_cast<uint64_t>(it.as_int64());
    } else if (key == "read_at" && it.holds_number()) {
      out->read_at = it.as_double();
    }
  }
  if (!has_metadata || out->metadata.db.empty() || out->metadata.collection.empty()) {
    return base::bad_input("not a collection's shared facts (no metadata with a namespace)");
  }
  return {};
}

}  // namespace docguard::advisor
