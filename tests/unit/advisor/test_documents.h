// Builds BSON documents with libbson for the advisor's tests.
#pragma once

#include <bson/bson.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "docguard/advisor/collection_profile.h"
#include "docguard/advisor/finding.h"

namespace docguard::advisor::test_documents {

// Takes ownership of `doc`.
inline void feed(CollectionProfile& profile, bson_t* doc) {
  EXPECT_TRUE(profile.add_document(bson_get_data(doc), doc->len));
  bson_destroy(doc);
}

// {_id: id, name: "...", <field>: [ {n: 0}, {n: 1}, ... length elements ]}
inline bson_t* document_with_array(int id, const char* field, int length) {
  bson_t* doc = bson_new();
  BSON_APPEND_INT32(doc, "_id", id);
  BSON_APPEND_UTF8(doc, "name", "item");
  bson_t array;
  BSON_APPEND_ARRAY_BEGIN(doc, field, &array);
  for (int i = 0; i < length; ++i) {
    char key[16];
    const char* key_ptr;
    bson_uint32_to_string(static_cast<uint32_t>(i), &key_ptr, key, sizeof key);
    bson_t element;
    bson_append_document_begin(&array, key_ptr, -1, &element);
    BSON_APPEND_INT32(&element, "n", i);
    bson_append_document_end(&array, &element);
  }
  bson_append_array_end(doc, &array);
  return doc;
}

inline CollectionMetadata metadata_with_indexes(
    const std::string& db, const std::string& collection,
    const std::vector<std::vector<std::string>>& index_keys) {
  CollectionMetadata m;
  m.db = db;
  m.collection = collection;
  m.known = true;
  m.type = "collection";
  IndexSpec id_index;
  id_index.name = "_id_";
  id_index.keys.emplace_back("_id", "1");
  m.indexes.push_back(id_index);
  for (const auto& keys : index_keys) {
    IndexSpec spec;
    for (const auto& key : keys) {
      spec.keys.emplace_back(key, "1");
      spec.name += key + "_1";
    }
    m.indexes.push_back(spec);
  }
  return m;
}

inline int count_kind(const std::vector<Finding>& findings, Finding::Kind kind,
                      const std::string& field = "") {
  return static_cast<int>(std::count_if(findings.begin(), findings.end(), [&](const Finding& f) {
    return f.kind == kind && (field.empty() || f.field == field);
  }));
}

}  // namespace docguard::advisor::test_documents
