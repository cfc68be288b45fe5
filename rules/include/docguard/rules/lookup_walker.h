// Finds every join in an aggregation pipeline, wherever it hides: top-level stages, $facet
// sub-pipelines, $unionWith pipelines, the pipelines of $lookup itself (nested up to the
// server's limit) and, through the caller, view definitions and explained aggregates.
#pragma once

#include <bson/bson.h>

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/bson_view.h"

namespace docguard::rules {

struct Join {
  std::string_view stage;  // "$lookup" or "$graphLookup"
  std::string_view from;   // the joined collection ("" when not given, e.g. $documents-only)
  uint32_t depth = 0;      // 0 for a top-level stage, +1 per enclosing sub-pipeline
};

class LookupWalker {
 public:
  // Calls on_join(const Join&) for each join, in document order. Views point into `pipeline`.
  // Returns the number of joins. Sub-pipelines deeper than kMaxDepth are not visited.
  template <typename OnJoin>
  static uint32_t walk(const codec::BsonView& pipeline, OnJoin&& on_join) {
    if (!codec::well_framed(pipeline)) return 0;
    Visitor v{&invoke<OnJoin>, &on_join};
    return walk_stages(pipeline, 0, v);
  }

  // Cheap pre-check: false means the bytes cannot contain a join (no "$lookup" or
  // "$graphLookup" key anywhere), which spares the walk for most pipelines.
  static bool may_contain_join(const codec::BsonView& pipeline);

  // The server allows 20 levels of nested $lookup; $facet and $unionWith add a few more.
  static constexpr uint32_t kMaxDepth = 24;

 private:
  struct Visitor {
    void (*fn)(void*, const Join&);
    void* ctx;
  };
  template <typename OnJoin>
  static void invoke(void* ctx, const Join& join) {
    (*static_cast<std::remove_reference_t<OnJoin>*>(ctx))(join);
  }
  static uint32_t walk_stages(const codec::BsonView& stages, uint32_t depth, const Visitor& v);
};

}  // namespace docguard::rules
