// The details of an operator update's failing paths, merged as the server writes the details of
// a whole post-image.
#include <bson/bson.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/codec/bson_elements.h"
#include "schema_explain.h"

namespace docguard::schema {

// The server judges the whole post-image: one entry per keyword, in its parser's order. The
// entries of an update's failing paths are merged the same way: one `properties` entry listing
// every failing property, one `required` entry with the missing names sorted, and so on (an
// `additionalProperties` schema reports its first failing property only, as the server does).
void merge_update_entries(const bson_t* entries, bson_t* out) {
  struct Kind {
    const char* name;
    const char* list;  // the member whose items are merged; null: the first entry only
  };
  static constexpr Kind kKinds[] = {{"properties", "propertiesNotSatisfied"},
                                    {"additionalProperties", "additionalProperties"},
                                    {"patternProperties", "details"},
                                    {"required", "missingProperties"}};
  uint32_t written = 0;
  for (const Kind& kind : kKinds) {
    std::vector<codec::BsonView> docs;
    if (entries->len < 5) return;
    for (codec::BsonElements it(entries); it.next();) {
      if (!it.holds_document() || !codec::well_framed(it.container())) continue;
      codec::BsonElements op(it.container());
      if (op.find("operatorName") && op.holds_utf8() && op.utf8() == kind.name) {
        docs.push_back(it.container());
      }
    }
    if (docs.empty()) continue;
    const std::string key = std::to_string(written++);
    bson_t first;
    if (!bson_init_static(&first, docs[0].data, docs[0].size)) continue;
    codec::BsonElements list_it(docs[0]);
    const bool mergeable = docs.size() > 1 && list_it.find(kind.list) && list_it.holds_array();
    if (!mergeable) {
      bson_append_document(out, key.c_str(), -1, &first);
      continue;
    }
    bson_t merged;
    bson_append_document_begin(out, key.c_str(), -1, &merged);
    for (codec::BsonElements field(docs[0]); field.next();) {
      if (field.key != kind.list) {
        field.append_to(&merged, field.key);
        continue;
      }
      // The items of every entry's list; names (required, additionalProperties) once each.
      std::vector<std::string> names;
      bson_t items;
      bson_append_array_begin(&merged, kind.list, -1, &items);
      uint32_t n = 0;
      for (const codec::BsonView& doc : docs) {
        codec::BsonElements list(doc);
        if (!list.find(kind.list) || !codec::is_container(list.type)) continue;
        for (codec::BsonElements item(list.container()); item.next();) {
          if (item.holds_utf8()) {
            names.emplace_back(item.utf8());
          } else {
            item.append_to(&items, std::to_string(n++));
          }
        }
      }
      std::sort(names.begin(), names.end());
      names.erase(std::unique(names.begin(), names.end()), names.end());
      for (const std::string& name : names) {
        bson_append_utf8(&items, std::to_string(n++).c_str(), -1, name.c_str(), -1);
      }
      bson_append_array_end(&merged, &items);
    }
    bson_append_document_end(out, &merged);
  }
}

}  // namespace docguard::schema
