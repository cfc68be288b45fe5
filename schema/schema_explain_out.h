// Building the server's details entries (schema_explain.cc, schema_explain_object.cc): BSON
// arrays and entries appended in place, and the parts every keyword's entry shares. Private to
// schema/.
#pragma once

#include <bson/bson.h>

#include <initializer_list>
#include <string>
#include <string_view>

#include "docguard/codec/bson_elements.h"
#include "schema_explain.h"
#include "schema_node.h"

namespace docguard::schema {

// A BSON array being appended to: keys "0", "1", ...
class ArrayOut {
 public:
  // A new array `key` in `parent`, closed when this goes out of scope.
  ArrayOut(bson_t* parent, const char* key) : parent_(parent), target_(&own_) {
    bson_append_array_begin(parent_, key, -1, &own_);
  }
  // An array already open elsewhere, continued after its last entry.
  explicit ArrayOut(bson_t* open) : target_(open), count_(bson_count_keys(open)) {}
  ~ArrayOut() {
    if (parent_ != nullptr) bson_append_array_end(parent_, &own_);
  }
  ArrayOut(const ArrayOut&) = delete;
  ArrayOut& operator=(const ArrayOut&) = delete;
  bson_t* get() { return target_; }
  std::string next_key() { return std::to_string(count_++); }

 private:
  bson_t* parent_ = nullptr;
  bson_t own_{};
  bson_t* target_;
  uint32_t count_ = 0;
};

// One entry of an ArrayOut, open while in scope.
class EntryOut {
 public:
  explicit EntryOut(ArrayOut& list) : list_(list) {
    const std::string key = list.next_key();
    bson_append_document_begin(list.get(), key.c_str(), -1, &doc_);
  }
  ~EntryOut() { bson_append_document_end(list_.get(), &doc_); }
  EntryOut(const EntryOut&) = delete;
  EntryOut& operator=(const EntryOut&) = delete;
  bson_t* get() { return &doc_; }

 private:
  ArrayOut& list_;
  bson_t doc_;
};

// The keyword's element in the subschema as written.
inline bool find_keyword(const Node& n, const char* keyword, codec::BsonElements* element) {
  const codec::BsonView source{n.source.data(), static_cast<uint32_t>(n.source.size())};
  if (!codec::well_framed(source)) return false;
  *element = codec::BsonElements(source);
  return element->find(keyword);
}

// specifiedAs: {keyword: as written, ...} for each keyword present.
inline void specified_as(bson_t* entry, const Node& n,
                         std::initializer_list<const char*> keywords) {
  if (explain_bounds.truncated) return;
  bson_t spec;
  bson_append_document_begin(entry, "specifiedAs", -1, &spec);
  for (const char* k : keywords) {
    codec::BsonElements element(nullptr, 0);
    if (find_keyword(n, k, &element)) element.append_to(&spec, k);
  }
  bson_append_document_end(entry, &spec);
}

inline void operator_name(bson_t* entry, const char* name) {
  bson_append_utf8(entry, "operatorName", -1, name, -1);
}

inline void title_description(bson_t* entry, const Node& n) {
  if (n.has_title)
    bson_append_utf8(entry, "title", -1, n.title.data(), static_cast<int>(n.title.size()));
  if (n.has_description) {
    bson_append_utf8(entry, "description", -1, n.description.data(),
                     static_cast<int>(n.description.size()));
  }
}

inline void utf8(bson_t* doc, const char* key, std::string_view text) {
  bson_append_utf8(doc, key, -1, text.data(), static_cast<int>(text.size()));
}

// A simple keyword's entry: {operatorName, specifiedAs, reason, consideredValue}.
inline void simple(ArrayOut& out, const Node& n, const char* keyword, const char* reason,
                   const Value& v, std::initializer_list<const char*> spec_keywords) {
  EntryOut e(out);
  operator_name(e.get(), keyword);
  specified_as(e.get(), n, spec_keywords);
  bson_append_utf8(e.get(), "reason", -1, reason, -1);
  append_value(e.get(), "consideredValue", v);
}

// {..., details: [entries of `sub` for `v`]}
inline void details_of(bson_t* entry, const Node& sub, const Value& v) {
  ArrayOut details(entry, "details");
  explain_entries(sub, v, details.get());
}

// The entries of the object keywords (properties, additionalProperties, patternProperties,
// required, minProperties/maxProperties, dependencies), in the server's order.
void explain_object(const Node& n, const Value& v, ArrayOut& out);

}  // namespace docguard::schema
