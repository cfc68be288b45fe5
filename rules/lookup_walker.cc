#include "docguard/rules/lookup_walker.h"

#include <cstring>
#include <string_view>

namespace docguard::rules {

using codec::key_of;
using codec::utf8_of;

namespace {

bool contains(const codec::BsonView& doc, std::string_view needle) {
  const auto* begin = reinterpret_cast<const char*>(doc.data);
  std::string_view hay(begin, doc.size);
  return hay.find(needle) != std::string_view::npos;
}

}  // namespace

bool LookupWalker::may_contain_join(const codec::BsonView& pipeline) {
  if (pipeline.empty()) return false;
  // Keys are NUL-terminated cstrings in BSON: "$lookup\0" also matches "$graphLookup\0".
  return contains(pipeline, std::string_view("ookup\0", 6));
}

uint32_t LookupWalker::walk_stages(bson_iter_t* stages, uint32_t depth, const Visitor& v) {
  uint32_t joins = 0;
  auto sub_pipeline = [&](const bson_iter_t* holder) {
    if (depth + 1 > kMaxDepth || !BSON_ITER_HOLDS_ARRAY(holder)) return;
    bson_iter_t child;
    if (bson_iter_recurse(holder, &child)) joins += walk_stages(&child, depth + 1, v);
  };
  while (bson_iter_next(stages)) {
    if (!BSON_ITER_HOLDS_DOCUMENT(stages)) continue;
    bson_iter_t stage;
    if (!bson_iter_recurse(stages, &stage) || !bson_iter_next(&stage)) continue;
    const std::string_view name = key_of(&stage);
    if (name == "$lookup" || name == "$graphLookup") {
      Join join{name, {}, depth};
      bson_iter_t spec;
      const bool is_doc = BSON_ITER_HOLDS_DOCUMENT(&stage);
      if (is_doc && bson_iter_recurse(&stage, &spec)) {
        while (bson_iter_next(&spec)) {
          const std::string_view field = key_of(&spec);
          if (field == "from") {
            if (BSON_ITER_HOLDS_UTF8(&spec)) {
              join.from = utf8_of(&spec);
            } else if (BSON_ITER_HOLDS_DOCUMENT(&spec)) {
              // Atlas Data Federation: from: {db, coll}.
              bson_iter_t from;
              if (bson_iter_recurse(&spec, &from) && bson_iter_find(&from, "coll")) {
                join.from = utf8_of(&from);
              }
            }
          }
        }
      }
      v.fn(v.ctx, join);
      ++joins;
      if (is_doc && bson_iter_recurse(&stage, &spec) && bson_iter_find(&spec, "pipeline")) {
        sub_pipeline(&spec);
      }
    } else if (name == "$facet" && BSON_ITER_HOLDS_DOCUMENT(&stage)) {
      bson_iter_t facets;
      if (bson_iter_recurse(&stage, &facets)) {
        while (bson_iter_next(&facets)) sub_pipeline(&facets);
      }
    } else if (name == "$unionWith" && BSON_ITER_HOLDS_DOCUMENT(&stage)) {
      bson_iter_t spec;
      if (bson_iter_recurse(&stage, &spec) && bson_iter_find(&spec, "pipeline")) {
        sub_pipeline(&spec);
      }
    }
  }
  return joins;
}

}  // namespace docguard::rules
