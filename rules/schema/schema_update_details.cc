// The details of an operator update's failing paths, merged as the server writes the details of
// a whole post-image.
#include <bson/bson.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "schema_explain.h"

namespace docguard::rules::schema {

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
    std::vector<const uint8_t*> docs;
    std::vector<uint32_t> sizes;
    bson_iter_t it;
    if (!bson_iter_init(&it, entries)) return;
    while (bson_iter_next(&it)) {
      if (!BSON_ITER_HOLDS_DOCUMENT(&it)) continue;
      uint32_t len = 0;
      const uint8_t* data = nullptr;
      bson_iter_document(&it, &len, &data);
      bson_iter_t op;
      if (bson_iter_init_from_data(&op, data, len) && bson_iter_find(&op, "operatorName") &&
          BSON_ITER_HOLDS_UTF8(&op) &&
          std::string_view(bson_iter_utf8(&op, nullptr)) == kind.name) {
        docs.push_back(data);
        sizes.push_back(len);
      }
    }
    if (docs.empty()) continue;
    const std::string key = std::to_string(written++);
    bson_t first;
    if (!bson_init_static(&first, docs[0], sizes[0])) continue;
    bson_iter_t list_it;
    const bool mergeable = docs.size() > 1 && bson_iter_init_find(&list_it, &first, kind.list) &&
                           BSON_ITER_HOLDS_ARRAY(&list_it);
    if (!mergeable) {
      bson_append_document(out, key.c_str(), -1, &first);
      continue;
    }
    bson_t merged;
    bson_append_document_begin(out, key.c_str(), -1, &merged);
    bson_iter_t field;
    bson_iter_init(&field, &first);
    while (bson_iter_next(&field)) {
      if (std::string_view(bson_iter_key(&field)) != kind.list) {
        bson_append_iter(&merged, bson_iter_key(&field), -1, &field);
        continue;
      }
      // The items of every entry's list; names (required, additionalProperties) once each.
      std::vector<std::string> names;
      bson_t items;
      bson_append_array_begin(&merged, kind.list, -1, &items);
      uint32_t n = 0;
      for (size_t i = 0; i < docs.size(); ++i) {
        bson_iter_t l, item;
        if (!bson_iter_init_from_data(&l, docs[i], sizes[i]) || !bson_iter_find(&l, kind.list) ||
            !bson_iter_recurse(&l, &item)) {
          continue;
        }
        while (bson_iter_next(&item)) {
          if (BSON_ITER_HOLDS_UTF8(&item)) {
            names.emplace_back(bson_iter_utf8(&item, nullptr));
          } else {
            bson_append_iter(&items, std::to_string(n++).c_str(), -1, &item);
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

}  // namespace docguard::rules::schema
