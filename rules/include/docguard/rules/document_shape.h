// Measuring what a write does to a document's shape: size, nesting depth and array lengths of
// whole documents (DocumentShape), and array growth by update operators (UpdateShape).
// Both read the message buffer in place (a walk that steps over values without decoding them)
// and never copy a document; their vectors
// are reused between messages, so a thread can keep one of each and measure without allocating.
#pragma once

#include <bson/bson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/bson_view.h"
#include "docguard/codec/document_outline.h"

namespace docguard::rules {

// One array field path and the largest length seen there. Paths carry no indices: the tags of
// every element of `variants` are all "variants.tags".
struct ArrayMeasure {
  std::string path;
  uint32_t length = 0;
};

// Descending stops here; BSON on the wire cannot nest deeper than ~200 anyway.
inline constexpr uint32_t kMaxWalkDepth = 256;

class DocumentShape {
 public:
  // Measures a whole document. `prefix` is the path the document sits at ("" for a top-level
  // document; used for values of $set). `base_depth` is the nesting the prefix already has.
  void measure(const codec::BsonView& doc, std::string_view prefix = {}, uint32_t base_depth = 0);
  // The same measure of a top-level document, read from the outline its validation took when
  // that describes it (no walk over its elements); walked otherwise.
  void measure(const codec::BsonView& doc, const codec::DocumentOutline& outline);
  // Measures an element's value (an array or document found inside an update).
  void measure_value(const codec::BsonElements& value, std::string_view path, uint32_t base_depth);
  // The same for a document or array given as its bytes.
  void measure_container(bool is_array, const codec::BsonView& container, std::string_view path,
                         uint32_t base_depth);
  void clear();

  uint32_t bytes() const { return bytes_; }
  // 1 for {a: 1}; each embedded document or array adds a level.
  uint32_t depth() const { return depth_; }
  // One entry per distinct path, longest length found there.
  const ArrayMeasure* arrays_begin() const { return arrays_.data(); }
  const ArrayMeasure* arrays_end() const { return arrays_.data() + array_count_; }
  size_t array_count() const { return array_count_; }
  // The top-level _id element, when the document has one.
  bool has_id() const { return has_id_; }
  const codec::BsonElements& id_element() const { return id_; }

 private:
  // Walks one document or array (`data`: its bytes, length prefix included); returns its
  // element count.
  // kFindId: a top-level document's walk, which also takes its _id (the first one) on the way.
  template <bool kFindId = false>
  uint32_t walk_container(const uint8_t* data, uint32_t size, uint32_t depth, bool is_array);
  void record_array(std::string_view path, uint32_t length);
  // Records the arrays at and under the outline's container `index` in walk_container's order
  // (what a container holds before the container itself).
  void record_outlined(const codec::BsonView& doc, const codec::DocumentOutline& outline,
                       uint32_t index, bool in_array);

  uint32_t bytes_ = 0;
  uint32_t depth_ = 0;
  std::vector<ArrayMeasure> arrays_;  // entries beyond array_count_ keep their capacity
  size_t array_count_ = 0;
  std::string path_;
  bool has_id_ = false;
  codec::BsonElements id_{nullptr, 0};
};

// Elements an update adds to one array.
struct ArrayGrowth {
  std::string path;        // normalized
  const char* op = "";     // "$push", "$addToSet", "$concatArrays"
  uint32_t elements = 0;   // $each counts each element; otherwise one
  bool has_slice = false;  // $push with $slice (or $slice around $concatArrays)
  uint32_t slice_cap = 0;  // |N| of $slice
  // Bytes the elements add to the stored document, as sent ($each's array without its own
  // header; one value with its element header); 0 when not measured ($concatArrays).
  uint32_t bytes = 0;
};

// What an update (`u` of an update statement, findAndModify `update`) does to arrays.
class UpdateShape {
 public:
  // `update` is the operator document ({$push: ..., $set: ...}) or, when `is_pipeline`, the
  // pipeline array. Replacement documents are measured with DocumentShape instead.
  void measure(const codec::BsonView& update, bool is_pipeline);
  void clear();

  const std::vector<ArrayGrowth>& growth() const { return growth_; }
  size_t growth_count() const { return growth_count_; }
  // Arrays set whole ($set: {f: [...]}) and arrays inside set values, with their lengths;
  // nesting depth of set values counted from the document root.
  const DocumentShape& set_values() const { return set_values_; }
  // Bytes of the $set/$setOnInsert (and pipeline $set/$addFields) operands: a lower bound on
  // the size of the document the update leaves (an upsert creates at least this much).
  uint32_t set_bytes() const { return set_bytes_; }

 private:
  void operator_document(const codec::BsonView& update);
  void pipeline(const codec::BsonView& stages);
  void add_growth(std::string_view path, const char* op, uint32_t elements, bool has_slice,
                  uint32_t slice_cap, uint32_t bytes = 0);

  std::vector<ArrayGrowth> growth_;
  size_t growth_count_ = 0;
  uint32_t set_bytes_ = 0;
  DocumentShape set_values_;
  std::string scratch_;
};

// Number of elements of the array an element holds (0 when not an array).
uint32_t array_length(const codec::BsonElements& element);

}  // namespace docguard::rules
