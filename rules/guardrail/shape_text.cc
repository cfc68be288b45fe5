// The text of a query's shape: fields and operators, never values, in the client's key order
// (query_guardrail.h says what it looks like and who reads it).
#include <bson/bson.h>

#include "docguard/base/bounded_text.h"
#include "docguard/codec/bson_elements.h"
#include "docguard/codec/bson_view.h"
#include "docguard/rules/query_guardrail.h"

namespace docguard::rules {

namespace {

using codec::BsonElements;
using codec::BsonView;

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
  void operators(const BsonView& field, int depth);
  void value(const BsonElements& element, int depth);
  void fields(const BsonView& doc, bool directions);
};

void ShapeWriter::filter(const BsonView& doc, int depth) {
  out.push_back('{');
  if (depth <= kMaxDepth && codec::well_framed(doc)) {
    bool first = true;
    for (BsonElements e(doc); e.next() && room();) {
      if (e.key == "$comment") continue;
      out.append(first ? "" : ", ");
      name(e.key);
      out.append(": ");
      first = false;
      value(e, depth);
    }
  }
  out.push_back('}');
}

void ShapeWriter::value(const BsonElements& e, int depth) {
  const std::string_view key = e.key;
  if ((key == "$and" || key == "$or" || key == "$nor") && e.holds_array()) {
    out.push_back('[');
    bool first = true;
    if (codec::well_framed(e.container())) {
      for (BsonElements clause(e.container()); clause.next() && room();) {
        out.append(first ? "" : ", ");
        first = false;
        if (clause.holds_document()) {
          filter(clause.container(), depth + 1);
        } else {
          out.push_back('?');
        }
      }
    }
    out.push_back(']');
  } else if (e.holds_document() && is_operator(first_key_of(e)) && first_key_of(e) != "$ref") {
    operators(e.container(), depth);
  } else if (e.holds_regex()) {
    out.append("/?/");  // a regex uses an index otherwise than an equality: its own shape
  } else {
    out.push_back('?');
  }
}

void ShapeWriter::operators(const BsonView& field, int depth) {
  out.push_back('{');
  if (depth <= kMaxDepth && codec::well_framed(field)) {
    bool first = true;
    for (BsonElements e(field); e.next() && room();) {
      const std::string_view op = e.key;
      out.append(first ? "" : ", ");
      name(op);
      out.append(": ");
      first = false;
      if ((op == "$elemMatch" || op == "$not") && e.holds_document()) {
        if (is_operator(first_key_of(e))) {
          operators(e.container(), depth + 1);
        } else {
          filter(e.container(), depth + 1);
        }
      } else {
        out.push_back('?');
      }
    }
  }
  out.push_back('}');
}

// A sort's fields with their directions (1 or -1, "?" for what is not a number), or a
// projection's fields alone: the field names are the shape, the projected values are not.
void ShapeWriter::fields(const BsonView& doc, bool directions) {
  out.push_back('{');
  bool first = true;
  if (codec::well_framed(doc)) {
    for (BsonElements e(doc); e.next() && room();) {
      out.append(first ? "" : ", ");
      name(e.key);
      first = false;
      if (directions) {
        out.append(": ");
        out.append(!e.holds_number() ? "?" : e.as_double() < 0 ? "-1" : "1");
      }
    }
  }
  out.push_back('}');
}

}  // namespace

bool append_shape_text(std::string& out, const QueryParts& parts, size_t max_bytes) {
  ShapeWriter w{out, out.size() + max_bytes};
  if (!parts.pipeline.empty()) {
    out.append("pipeline [");
    bool first = true;
    if (codec::well_framed(parts.pipeline)) {
      for (BsonElements stages(parts.pipeline); stages.next() && w.room();) {
        if (!stages.holds_document()) continue;
        BsonElements stage(stages.container());
        if (!codec::well_framed(stages.container()) || !stage.next()) continue;
        const std::string_view name = stage.key;
        out.append(first ? "" : ", ");
        w.name(name);
        first = false;
        if ((name == "$match" || name == "$sort") && stage.holds_document()) {
          out.push_back(' ');
          if (name == "$match") {
            w.filter(stage.container(), 0);
          } else {
            w.fields(stage.container(), /*directions=*/true);
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
    w.fields(parts.sort, /*directions=*/true);
  }
  if (!parts.projection.empty() && w.room()) {
    out.append(" projection ");
    w.fields(parts.projection, /*directions=*/false);
  }
  return w.full;
}

}  // namespace docguard::rules
