#include "docguard/rules/lookup_walker.h"

#include <cstring>
#include <string_view>

namespace docguard::rules {

using Elements = codec::BsonElements;

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

uint32_t LookupWalker::walk_stages(const codec::BsonView& stages, uint32_t depth,
                                   const Visitor& v) {
  uint32_t joins = 0;
  auto sub_pipeline = [&](const Elements& holder) {
    if (depth + 1 > kMaxDepth || !holder.holds_array() || !codec::well_framed(holder.container())) {
      return;
    }
    joins += walk_stages(holder.container(), depth + 1, v);
  };
  // The element `key` of the document `holder` holds, searched from its start.
  auto find_in = [](const Elements& holder, std::string_view key, Elements* out) {
    if (!codec::well_framed(holder.container())) return false;
    *out = Elements(holder.container());
    return out->find(key);
  };
  for (Elements stage_element(stages); stage_element.next();) {
    if (!stage_element.holds_document() || !codec::well_framed(stage_element.container())) {
      continue;
    }
    Elements stage(stage_element.container());
    if (!stage.next()) continue;
    const std::string_view name = stage.key;
    if (name == "$lookup" || name == "$graphLookup") {
      Join join{name, {}, depth};
      const bool is_doc = stage.holds_document() && codec::well_framed(stage.container());
      if (is_doc) {
        for (Elements spec(stage.container()); spec.next();) {
          if (spec.key != "from") continue;
          if (spec.holds_utf8()) {
            join.from = spec.utf8();
          } else if (Elements from(nullptr, 0);
                     spec.holds_document() && find_in(spec, "coll", &from)) {
            join.from = from.utf8();  // Atlas Data Federation: from: {db, coll}.
          }
        }
      }
      v.fn(v.ctx, join);
      ++joins;
      if (Elements pipeline(nullptr, 0); is_doc && find_in(stage, "pipeline", &pipeline)) {
        sub_pipeline(pipeline);
      }
    } else if (name == "$facet" && stage.holds_document() &&
               codec::well_framed(stage.container())) {
      for (Elements facet(stage.container()); facet.next();) sub_pipeline(facet);
    } else if (Elements pipeline(nullptr, 0); name == "$unionWith" && stage.holds_document() &&
                                              find_in(stage, "pipeline", &pipeline)) {
      sub_pipeline(pipeline);
    }
  }
  return joins;
}

}  // namespace docguard::rules
