// The shape's hash on the message path: the same walk as the shape text's writer
// (query_guardrail.cc, ShapeWriter) over the same parts, mixing each key and each structural
// mark into 64 bits instead of appending them to a string. Two queries whose shape texts are
// equal hash alike; the text is written only when the ledger admits a new shape.
#include <cstring>

#include "docguard/codec/bson_elements.h"
#include "docguard/rules/query_guardrail.h"
#include "docguard/rules/workload_ledger.h"

namespace docguard::rules {

namespace {

using codec::BsonElements;
using codec::BsonView;

// As the writer's: nesting past this is not written out. The hash goes on past it, over the
// deeper part's bytes (values too): two shapes that differ only there never merge.
constexpr int kMaxDepth = 8;

// Marks for what the writer writes besides keys.
enum Mark : uint64_t {
  kOpen = 1,
  kClose,
  kValue,
  kListOpen,
  kListClose,
  kSort,
  kProjection,
  kPipeline,
  kAscending,
  kDescending,
  kOther,
  kRegex
};

inline uint64_t mix(uint64_t h, uint64_t v) { return workload_mix(h, v); }

inline uint64_t mix_key(uint64_t h, std::string_view key) {
  const char* p = key.data();
  size_t n = key.size();
  while (n >= 8) {
    uint64_t chunk = 0;
    std::memcpy(&chunk, p, 8);
    h = mix(h, chunk);
    p += 8;
    n -= 8;
  }
  uint64_t tail = n;  // the length in the low bits tells "ab" from "ab\0"
  for (size_t i = 0; i < n; ++i)
    tail |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * (i + 1));
  return mix(h, tail);
}

using codec::first_key_of;
using codec::is_operator;

uint64_t filter(uint64_t h, const BsonView& doc, int depth);

uint64_t operators(uint64_t h, const BsonElements& field, int depth) {
  h = mix(h, kOpen);
  if (depth > kMaxDepth) {
    h = mix_key(h, {reinterpret_cast<const char*>(field.value), field.value_size});
  } else {
    for (BsonElements e(field.value, field.value_size); e.next();) {
      h = mix_key(h, e.key);
      if ((e.key == "$elemMatch" || e.key == "$not") && e.holds_document()) {
        h = is_operator(first_key_of(e)) ? operators(h, e, depth + 1)
                                         : filter(h, e.container(), depth + 1);
      } else {
        h = mix(h, kValue);
      }
    }
  }
  return mix(h, kClose);
}

// The types first: most values are scalars, and only they are compared by key after that.
uint64_t value(uint64_t h, const BsonElements& e, int depth) {
  if (e.holds_array()) {
    if (e.key == "$and" || e.key == "$or" || e.key == "$nor") {
      h = mix(h, kListOpen);
      for (BsonElements clause(e.value, e.value_size); clause.next();) {
        h = clause.holds_document() ? filter(h, clause.container(), depth + 1) : mix(h, kValue);
      }
      return mix(h, kListClose);
    }
  } else if (e.holds_document()) {
    const std::string_view first = first_key_of(e);
    if (is_operator(first) && first != "$ref") return operators(h, e, depth);
  } else if (e.type == BSON_TYPE_REGEX) {
    return mix(h, kRegex);  // {name: /^a/} is not {name: "a"}: another index use, another shape
  }
  return mix(h, kValue);
}

uint64_t filter(uint64_t h, const BsonView& doc, int depth) {
  h = mix(h, kOpen);
  if (depth > kMaxDepth && !doc.empty()) {
    h = mix_key(h, {reinterpret_cast<const char*>(doc.data), doc.size});
  } else if (!doc.empty()) {
    for (BsonElements e(doc); e.next();) {
      if (is_operator(e.key) && e.key == "$comment") continue;
      h = value(mix_key(h, e.key), e, depth);
    }
  }
  return mix(h, kClose);
}

// A sort direction's sign, as the writer reads it (bson_iter_as_double < 0).
bool negative(const BsonElements& e) {
  if (e.type == BSON_TYPE_DOUBLE) {
    double d = 0;
    std::memcpy(&d, e.value, sizeof d);
    return d < 0;
  }
  return e.as_int64() < 0;
}

uint64_t sort(uint64_t h, const BsonView& doc) {
  h = mix(h, kSort);
  for (BsonElements e(doc); e.next();) {
    h = mix_key(h, e.key);
    if (!e.holds_number()) {
      h = mix(h, kOther);
    } else {
      h = mix(h, negative(e) ? kDescending : kAscending);
    }
  }
  return h;
}

uint64_t keys(uint64_t h, const BsonView& doc) {
  h = mix(h, kProjection);
  for (BsonElements e(doc); e.next();) h = mix_key(h, e.key);
  return h;
}

}  // namespace

uint64_t workload_shape_hash(const HashedQuery& parts, uint64_t seed) {
  uint64_t h = seed;
  if (!parts.pipeline.empty()) {
    h = mix(h, kPipeline);
    for (BsonElements stages(parts.pipeline); stages.next();) {
      if (!stages.holds_document()) continue;
      BsonElements stage(stages.value, stages.value_size);
      if (!stage.next()) continue;
      h = mix_key(h, stage.key);
      if (stage.key == "$match" && stage.holds_document()) h = filter(h, stage.container(), 0);
      if (stage.key == "$sort" && stage.holds_document()) h = sort(h, stage.container());
    }
    return h;
  }
  // Hashed as filter() hashes such a document, for a fraction of the walk.
  const std::string_view key = parts.filter_scalar_key
                                   ? *parts.filter_scalar_key
                                   : codec::single_scalar_equality(parts.filter);
  if (!key.empty()) {
    h = mix(mix(mix_key(mix(h, kOpen), key), kValue), kClose);
  } else {
    h = filter(h, parts.filter, 0);
  }
  if (!parts.sort.empty()) h = sort(h, parts.sort);
  if (!parts.projection.empty()) h = keys(h, parts.projection);
  return h;
}

}  // namespace docguard::rules
