#include "docguard/rules/document_shape.h"

#include <algorithm>

#include "docguard/codec/bson_elements.h"
#include "docguard/rules/collection_stats.h"
#include "docguard/rules/rule_set.h"

namespace docguard::rules {

using Elements = codec::BsonElements;
using codec::is_container;

namespace {

// Distinct array paths remembered per document; the rest share one entry so their lengths are
// still checked against max_array_length.
constexpr size_t kMaxPathsPerDocument = 256;

uint32_t count_components(std::string_view path) {
  return static_cast<uint32_t>(std::count(path.begin(), path.end(), '.')) + 1;
}

uint32_t clamp_u32(int64_t v) {
  v = v < 0 ? -v : v;
  return v > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(v);
}

}  // namespace

uint32_t array_length(const Elements& element) {
  if (!element.holds_array()) return 0;
  uint32_t n = 0;
  for (Elements child(element.container()); child.next();) ++n;
  return n;
}

// ---------------------------------------------------------------------------------------------

void DocumentShape::clear() {
  bytes_ = 0;
  depth_ = 0;
  array_count_ = 0;
  path_.clear();
  has_id_ = false;
}

void DocumentShape::measure(const codec::BsonView& doc, std::string_view prefix,
                            uint32_t base_depth) {
  clear();
  bytes_ = doc.size;
  if (!codec::well_framed(doc)) return;
  path_.assign(prefix);
  // Only a top-level document's _id identifies it.
  if (prefix.empty()) {
    walk_container<true>(doc.data, doc.size, base_depth + 1, false);
  } else {
    walk_container(doc.data, doc.size, base_depth + 1, false);
  }
}

void DocumentShape::measure(const codec::BsonView& doc, const codec::DocumentOutline& outline) {
  if (!outline.describes(doc)) {
    measure(doc);
    return;
  }
  clear();
  bytes_ = doc.size;
  depth_ = outline.depth;
  id_ = Elements(doc);
  if (outline.id_first) {
    has_id_ = id_.next();
  } else {
    has_id_ = id_.find("_id");
  }
  for (uint32_t i = 0; i < outline.count; i = outline.containers[i].end) {
    const codec::DocumentOutline::Container& c = outline.containers[i];
    if (c.end == i + 1) {
      // A top-level document or array holding no other: the commonest; its path is its key.
      if (c.is_array) {
        record_array({reinterpret_cast<const char*>(doc.data) + c.element + 1, c.key_size},
                     c.length);
      }
      continue;
    }
    record_outlined(doc, outline, i, false);
  }
}

void DocumentShape::record_outlined(const codec::BsonView& doc,
                                    const codec::DocumentOutline& outline, uint32_t index,
                                    bool in_array) {
  const codec::DocumentOutline::Container& c = outline.containers[index];
  const size_t saved = path_.size();
  if (!in_array) {
    if (!path_.empty()) path_.push_back('.');
    path_.append(reinterpret_cast<const char*>(doc.data) + c.element + 1, c.key_size);
  }
  for (uint32_t i = index + 1; i < c.end; i = outline.containers[i].end) {
    record_outlined(doc, outline, i, c.is_array);
  }
  if (c.is_array) record_array(path_, c.length);
  path_.resize(saved);
}

void DocumentShape::measure_value(const Elements& value, std::string_view path,
                                  uint32_t base_depth) {
  if (!is_container(value.type)) return;
  measure_container(value.holds_array(), value.container(), path, base_depth);
}

void DocumentShape::measure_container(bool is_array, const codec::BsonView& container,
                                      std::string_view path, uint32_t base_depth) {
  if (container.size < 5) return;
  path_.assign(path);
  uint32_t depth = base_depth + 1;
  if (is_array) {
    // walk_container records arrays it finds as elements; the top array is recorded here.
    depth_ = std::max(depth_, depth);
    uint32_t n = 0;
    Elements child(container.data, container.size);
    while (child.next()) {
      ++n;
      if (is_container(child.type) && depth < kMaxWalkDepth) {
        uint32_t len =
            walk_container(child.value, child.value_size, depth + 1, child.type == BSON_TYPE_ARRAY);
        if (child.type == BSON_TYPE_ARRAY) record_array(path_, len);
      }
    }
    record_array(path, n);
  } else {
    walk_container(container.data, container.size, depth, false);
  }
}

template <bool kFindId>
uint32_t DocumentShape::walk_container(const uint8_t* data, uint32_t size, uint32_t depth,
                                       bool is_array) {
  depth_ = std::max(depth_, depth);
  uint32_t n = 0;
  Elements element(data, size);
  while (element.next()) {
    ++n;
    if constexpr (kFindId) {
      const std::string_view key = element.key;
      if (!has_id_ && key.size() == 3 && key[0] == '_' && key[1] == 'i' && key[2] == 'd') {
        id_ = element;
        has_id_ = true;
      }
    }
    if (!is_container(element.type)) continue;
    const size_t saved = path_.size();
    if (!is_array) {
      if (!path_.empty()) path_.push_back('.');
      path_.append(element.key);
    }
    if (depth < kMaxWalkDepth) {
      const uint32_t len = walk_container(element.value, element.value_size, depth + 1,
                                          element.type == BSON_TYPE_ARRAY);
      if (element.type == BSON_TYPE_ARRAY) record_array(path_, len);
    } else if (element.type == BSON_TYPE_ARRAY) {
      uint32_t len = 0;
      for (Elements e(element.value, element.value_size); e.next();) ++len;
      record_array(path_, len);
    }
    path_.resize(saved);
  }
  return n;
}

void DocumentShape::record_array(std::string_view path, uint32_t length) {
  for (size_t i = 0; i < array_count_; ++i) {
    if (arrays_[i].path == path) {
      arrays_[i].length = std::max(arrays_[i].length, length);
      return;
    }
  }
  if (array_count_ >= kMaxPathsPerDocument) {
    path = kOverflowLabel;
    for (size_t i = 0; i < array_count_; ++i) {
      if (arrays_[i].path == path) {
        arrays_[i].length = std::max(arrays_[i].length, length);
        return;
      }
    }
  }
  if (array_count_ == arrays_.size()) arrays_.emplace_back();
  arrays_[array_count_].path.assign(path);
  arrays_[array_count_].length = length;
  ++array_count_;
}

// ---------------------------------------------------------------------------------------------

void UpdateShape::clear() {
  growth_count_ = 0;
  set_bytes_ = 0;
  set_values_.clear();
}

void UpdateShape::measure(const codec::BsonView& update, bool is_pipeline) {
  clear();
  if (update.empty()) return;
  if (!is_pipeline) {
    operator_document(update);
    return;
  }
  if (codec::well_framed(update)) pipeline(update);
}

void UpdateShape::add_growth(std::string_view path, const char* op, uint32_t elements,
                             bool has_slice, uint32_t slice_cap, uint32_t bytes) {
  if (growth_count_ == growth_.size()) growth_.emplace_back();
  ArrayGrowth& g = growth_[growth_count_++];
  g.path = normalize_field_path(path);
  g.op = op;
  g.elements = elements;
  g.has_slice = has_slice;
  g.slice_cap = slice_cap;
  g.bytes = bytes;
}

void UpdateShape::operator_document(const codec::BsonView& update) {
  // Stepped through like whole documents (bson_elements.h): every statement of an update
  // command comes here.
  Elements op_element(update.data, update.size);
  while (op_element.next()) {
    const std::string_view op = op_element.key;
    const bool push = op == "$push";
    const bool add_to_set = op == "$addToSet";
    const bool set = op == "$set" || op == "$setOnInsert";
    if (!(push || add_to_set || set) || op_element.type != BSON_TYPE_DOCUMENT) continue;
    if (set) set_bytes_ += op_element.value_size;
    Elements field(op_element.value, op_element.value_size);
    while (field.next()) {
      const std::string_view path = field.key;
      if (set) {
        if (is_container(field.type)) {
          scratch_ = normalize_field_path(path);
          set_values_.measure_container(field.type == BSON_TYPE_ARRAY,
                                        codec::BsonView{field.value, field.value_size}, scratch_,
                                        count_components(path));
        }
        continue;
      }
      uint32_t elements = 1;
      bool has_slice = false;
      uint32_t cap = 0;
      // One element in the stored array: type byte, index key (a few digits and its NUL), value.
      constexpr uint32_t kElementHeader = 4;
      uint32_t bytes = field.value_size + kElementHeader;
      if (field.type == BSON_TYPE_DOCUMENT) {
        // {$each: [...], $slice: N, ...} modifiers; a plain document is one element.
        bool has_each = false;
        uint32_t each = 0;
        Elements mod(field.value, field.value_size);
        while (mod.next()) {
          if (mod.key == "$each") {
            has_each = true;
            each = 0;
            bytes = 0;
            if (mod.type == BSON_TYPE_ARRAY) {
              for (Elements e(mod.value, mod.value_size); e.next();) ++each;
              // The $each array's elements, without its length prefix and terminator.
              bytes = mod.value_size > 5 ? mod.value_size - 5 : 0;
            }
          } else if (mod.key == "$slice" && push) {
            int64_t n = 0;
            if (mod.as_int(&n)) {
              has_slice = true;
              cap = clamp_u32(n);
            }
          }
        }
        if (has_each) elements = each;
        if (!has_each) has_slice = false;  // $slice without $each is not a modifier
      }
      add_growth(path, push ? "$push" : "$addToSet", elements, has_slice, cap, bytes);
    }
  }
}

namespace {

// Elements that literal arrays in a $concatArrays argument list add.
uint32_t literal_elements(const Elements& args) {
  if (!args.holds_array()) return 0;
  uint32_t n = 0;
  for (Elements arg(args.container()); arg.next();) {
    if (arg.holds_array()) {
      n += array_length(arg);
    } else if (arg.holds_document()) {
      Elements lit(arg.container());
      if (lit.find("$literal")) n += array_length(lit);
    }
  }
  return n;
}

}  // namespace

void UpdateShape::pipeline(const codec::BsonView& stages) {
  for (Elements stage_element(stages); stage_element.next();) {
    if (!stage_element.holds_document()) continue;
    Elements stage(stage_element.container());
    if (!stage.next()) continue;
    const std::string_view name = stage.key;
    if ((name != "$set" && name != "$addFields") || !stage.holds_document()) continue;
    set_bytes_ += stage.value_size;
    for (Elements field(stage.container()); field.next();) {
      const std::string_view path = field.key;
      if (field.holds_array()) {
        // An array literal in an expression: its length is what gets stored.
        scratch_ = normalize_field_path(path);
        set_values_.measure_value(field, scratch_, count_components(path));
        continue;
      }
      if (!field.holds_document()) continue;
      Elements expr(field.container());
      if (!expr.next()) continue;
      const std::string_view op = expr.key;
      if (op == "$concatArrays") {
        add_growth(path, "$concatArrays", literal_elements(expr), false, 0);
      } else if (op == "$slice" && expr.holds_array()) {
        // {$slice: [{$concatArrays: [...]}, N]} or [..., position, N]: bounded by |N|.
        uint32_t added = 0;
        bool concat = false;
        int64_t last = 0;
        bool has_n = false;
        for (Elements arg(expr.container()); arg.next();) {
          if (arg.holds_document()) {
            Elements inner(arg.container());
            if (inner.find("$concatArrays")) {
              concat = true;
              added = literal_elements(inner);
            }
          } else if (arg.as_int(&last)) {
            has_n = true;
          }
        }
        if (concat) add_growth(path, "$concatArrays", added, has_n, has_n ? clamp_u32(last) : 0);
      }
    }
  }
}

}  // namespace docguard::rules
