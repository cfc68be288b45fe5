// The text of a query's shape: fields and operators, never values, in the client's key order
// (query_guardrail.h says what it looks like and who reads it).
#include <bson/bson.h>

#include "docguard/base/bounded_text.h"
#include "docguard/codec/bson_elements.h"
#include "docguard/codec/bson_view.h"
#include "docguard/rules/query_guardrail.h"

namespace docguard::rules {

namespace {

using codec::BsonView;
using codec::key_of;

// Past this depth of $and / $or / $elemMatch nesting the shape text says no more.
constexpr int kMaxDepth = 8;

using codec::first_key_of;
using codec::is_operator;

struct ShapeWriter {
  std::string& out;
  size_t limit;
  bool full = false;  // cut: the text says no more, and ends its last name with "..."

  bool room() {
    if (!full && out.size() > limit) {
      out.append("...");
      full = true;
    }
    return !full;
  }
  // A key or a stage name: whole when it fits under the limit, else cut inside it (at a UTF-8
  // character boundary) and marked, so one key of megabytes is not copied whole.
  void name(std::string_view key) {
    if (full) return;
    const size_t left = limit > out.size() ? limit - out.size() : 0;
    if (key.size() <= left) {
      out.append(key);
      return;
    }
    out.append(key.substr(0, base::utf8_prefix_length(key, left))).append("...");
    full = true;
  }
  void filter(const BsonView& doc, int depth);
  void operators(const bson_iter_t& field, int depth);
  void value(const bson_iter_t& it, std::string_view key, int depth);
  void sort(const BsonView& doc);
  void keys(const BsonView& doc);
};

void ShapeWriter::filter(const BsonView& doc, int depth) {
  bson_iter_t it;
  out.push_back('{');
  if (depth <= kMaxDepth && !doc.empty() && bson_iter_init_from_data(&it, doc.data, doc.size)) {
    bool first = true;
    while (bson_iter_next(&it) && room()) {
      const std::string_view key = key_of(it);
      if (key == "$comment") continue;
      out.append(first ? "" : ", ");
      name(key);
      out.append(": ");
      first = false;
      value(it, key, depth);
    }
  }
  out.push_back('}');
}

void ShapeWriter::value(const bson_iter_t& it, std::string_view key, int depth) {
  if ((key == "$and" || key == "$or" || key == "$nor") && BSON_ITER_HOLDS_ARRAY(&it)) {
    bson_iter_t clauses;
    out.push_back('[');
    bool first = true;
    if (bson_iter_recurse(&it, &clauses)) {
      while (bson_iter_next(&clauses) && room()) {
        out.append(first ? "" : ", ");
        first = false;
        if (BSON_ITER_HOLDS_DOCUMENT(&clauses)) {
          filter(codec::view_of(clauses), depth + 1);
        } else {
          out.push_back('?');
        }
      }
    }
    out.push_back(']');
  } else if (BSON_ITER_HOLDS_DOCUMENT(&it) && is_operator(first_key_of(it)) &&
             first_key_of(it) != "$ref") {
    operators(it, depth);
  } else if (BSON_ITER_HOLDS_REGEX(&it)) {
    out.append("/?/");  // a regex uses an index otherwise than an equality: its own shape
  } else {
    out.push_back('?');
  }
}

void ShapeWriter::operators(const bson_iter_t& field, int depth) {
  bson_iter_t it;
  out.push_back('{');
  if (depth <= kMaxDepth && bson_iter_recurse(&field, &it)) {
    bool first = true;
    while (bson_iter_next(&it) && room()) {
      const std::string_view op = key_of(it);
      out.append(first ? "" : ", ");
      name(op);
      out.append(": ");
      first = false;
      if ((op == "$elemMatch" || op == "$not") && BSON_ITER_HOLDS_DOCUMENT(&it)) {
        if (is_operator(first_key_of(it))) {
          operators(it, depth + 1);
        } else {
          filter(codec::view_of(it), depth + 1);
        }
      } else {
        out.push_back('?');
      }
    }
  }
  out.push_back('}');
}

void ShapeWriter::sort(const BsonView& doc) {
  bson_iter_t it;
  out.push_back('{');
  bool first = true;
  if (bson_iter_init_from_data(&it, doc.data, doc.size)) {
    while (bson_iter_next(&it) && room()) {
      out.append(first ? "" : ", ");
      name(key_of(it));
      out.append(": ");
      first = false;
      const bool numeric =
          BSON_ITER_HOLDS_INT32(&it) || BSON_ITER_HOLDS_INT64(&it) || BSON_ITER_HOLDS_DOUBLE(&it);
      out.append(!numeric ? "?" : bson_iter_as_double(&it) < 0 ? "-1" : "1");
    }
  }
  out.push_back('}');
}

void ShapeWriter::keys(const BsonView& doc) {
  bson_iter_t it;
  out.push_back('{');
  bool first = true;
  if (bson_iter_init_from_data(&it, doc.data, doc.size)) {
    while (bson_iter_next(&it) && room()) {
      out.append(first ? "" : ", ");
      name(key_of(it));
      first = false;
    }
  }
  out.push_back('}');
}

}  // namespace

bool append_shape_text(std::string& out, const QueryParts& parts, size_t max_bytes) {
  ShapeWriter w{out, out.size() + max_bytes};
  if (!parts.pipeline.empty()) {
    bson_iter_t stages, stage;
    out.append("pipeline [");
    bool first = true;
    if (bson_iter_init_from_data(&stages, parts.pipeline.data, parts.pipeline.size)) {
      while (bson_iter_next(&stages) && w.room()) {
        if (!BSON_ITER_HOLDS_DOCUMENT(&stages) || !bson_iter_recurse(&stages, &stage) ||
            !bson_iter_next(&stage)) {
          continue;
        }
        const std::string_view name = key_of(stage);
        out.append(first ? "" : ", ");
        w.name(name);
        first = false;
        if ((name == "$match" || name == "$sort") && BSON_ITER_HOLDS_DOCUMENT(&stage)) {
          out.push_back(' ');
          if (name == "$match") {
            w.filter(codec::view_of(stage), 0);
          } else {
            w.sort(codec::view_of(stage));
          }
        }
      }
    }
    out.push_back(']');
    return w.full;
  }
  w.filter(parts.filter, 0);
  if (!parts.sort.empty() && w.room()) {
    out.append(" sort ");
    w.sort(parts.sort);
  }
  if (!parts.projection.empty() && w.room()) {
    out.append(" projection ");
    w.keys(parts.projection);
  }
  return w.full;
}

}  // namespace docguard::rules
