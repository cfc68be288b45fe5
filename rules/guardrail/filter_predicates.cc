// A filter read into the predicates the server's match expression parser makes of it: what
// matters to index selection is each predicate's kind, path and operand type. {a: {$ne: 5}} is
// NOT(a == 5), {$exists: false} is NOT(EXISTS), {$nin: [..]} is NOT(IN), {$all: [x, y]} is
// (a == x AND a == y), {a: {$elemMatch: {b: 1}}} puts b under a. Anything the model does not
// cover (an unknown operator, $alwaysFalse, an $expr it cannot read) marks the filter uncertain:
// the guardrail then never refuses it.
#include <memory>
#include <string>
#include <string_view>

#include "docguard/codec/bson_elements.h"
#include "planner_model.h"

namespace docguard::rules::planner {

namespace {

using codec::BsonElements;
using codec::BsonView;

constexpr int kMaxDepth = 32;
// The bytes of all field paths one filter may hold, each stored once: twice the filter's own
// bytes and 64 KiB. A path is its name and the prefixes of the $elemMatch it is under; names
// repeated as prefixes at each of 32 levels could make 32 times the filter, so a crafted one
// stops here, uncertain.
constexpr size_t kPathBytesBase = size_t{64} * 1024;

using codec::first_key;
using codec::is_operator;

bool collatable(uint8_t type) {
  return type == BSON_TYPE_UTF8 || type == BSON_TYPE_SYMBOL || type == BSON_TYPE_ARRAY ||
         type == BSON_TYPE_DOCUMENT;
}

class Parser {
 public:
  Parser(size_t max_nodes, size_t max_path_bytes)
      : budget_(max_nodes), path_bytes_left_(max_path_bytes) {}

  ParsedFilter out;

  void conjunction(const BsonView& doc, std::string_view prefix, Predicate& into, int depth);

 private:
  Predicate* add(Predicate& parent, Op op, std::string_view path) {
    if (budget_ == 0) {
      out.uncertain = true;
      return nullptr;
    }
    --budget_;
    parent.children.push_back(Predicate{});
    Predicate& p = parent.children.back();
    p.op = op;
    p.path = path;  // interned (or ""): shared by every predicate on the field
    return &p;
  }
  // A field's path, stored once in the filter however many predicates name it ({$all} of
  // thousands of values, {$in}, a range). Null past the path budget: the filter is uncertain.
  const std::string* intern(std::string_view prefix, std::string_view key) {
    const size_t size = prefix.size() + key.size();
    if (size > path_bytes_left_) {
      out.uncertain = true;
      return nullptr;
    }
    path_bytes_left_ -= size;
    auto stored = std::make_unique<std::string>();
    stored->reserve(size);
    stored->append(prefix).append(key);
    out.paths.push_back(std::move(stored));
    return out.paths.back().get();
  }
  void comparison(Predicate& parent, Op op, std::string_view path, const BsonElements& value);
  void in_list(Predicate& parent, std::string_view path, const BsonElements& list);
  void field(Predicate& parent, std::string_view path, const BsonElements& value, int depth);
  void operators(Predicate& parent, std::string_view path, const BsonView& ops, int depth);
  void elem_match(Predicate& parent, std::string_view path, const BsonView& body, int depth);
  void logical(Predicate& parent, Op op, const BsonElements& clauses, std::string_view prefix,
               int depth);
  void expr(Predicate& parent, const BsonView& body, int depth);

  size_t budget_;
  size_t path_bytes_left_;
};

void Parser::comparison(Predicate& parent, Op op, std::string_view path,
                        const BsonElements& value) {
  if (value.type == BSON_TYPE_REGEX && op == Op::kEq) op = Op::kRegex;  // {a: /x/}
  Predicate* p = add(parent, op, path);
  if (p == nullptr) return;
  p->operand_type = value.type;
  p->operand = value.value;
  p->operand_size = value.value_size;
  p->null_operand = value.type == BSON_TYPE_NULL;
  p->array_operand = value.type == BSON_TYPE_ARRAY;
  p->object_operand = value.type == BSON_TYPE_DOCUMENT;
  p->collatable_operand = collatable(value.type);
  p->min_max_bound = value.type == BSON_TYPE_MINKEY || value.type == BSON_TYPE_MAXKEY;
  p->nonempty_container = (value.holds_array() || value.holds_document()) && value.value_size > 5;
}

void Parser::in_list(Predicate& parent, std::string_view path, const BsonElements& list) {
  Predicate* p = add(parent, Op::kIn, path);
  if (p == nullptr) return;
  p->operand_type = list.type;
  p->operand = list.value;
  p->operand_size = list.value_size;
  for (BsonElements v(list.container()); v.next();) {
    ++p->in_count;
    p->null_operand |= v.type == BSON_TYPE_NULL;
    p->in_regex |= v.type == BSON_TYPE_REGEX;
    p->array_operand |= v.holds_array();
    p->in_empty_array |= v.holds_array() && v.value_size == 5;
    p->object_operand |= v.holds_document();
    p->collatable_operand |= collatable(v.type);
    p->nonempty_container |= (v.holds_array() || v.holds_document()) && v.value_size > 5;
  }
  // An empty list: the server optimizes {$in: []} to an always-false expression (in an AND the
  // whole query, in an $or its branch) and answers from an EOF plan without an index, and
  // {$nin: []} to always-true. Not modelled here: the query is passed and counted as unknown.
  if (p->in_count == 0) out.uncertain = true;
}

void Parser::field(Predicate& parent, std::string_view path, const BsonElements& value, int depth) {
  if (value.holds_document()) {
    const BsonView doc = value.container();
    const std::string_view first = first_key(doc);
    // {$ref, $id} is a DBRef: a whole document compared for equality, like any other.
    if (is_operator(first) && first != "$ref" && first != "$id" && first != "$db") {
      operators(parent, path, doc, depth + 1);
      return;
    }
  }
  comparison(parent, Op::kEq, path, value);
}

void Parser::operators(Predicate& parent, std::string_view path, const BsonView& ops, int depth) {
  if (depth > kMaxDepth) {
    out.uncertain = true;
    return;
  }
  bool regex_done = false;
  for (BsonElements e(ops); e.next();) {
    const std::string_view op = e.key;
    if (op == "$eq") {
      comparison(parent, Op::kEq, path, e);
    } else if (op == "$lt" || op == "$lte" || op == "$gt" || op == "$gte") {
      const Op kind = op == "$lt"    ? Op::kLt
                      : op == "$lte" ? Op::kLte
                      : op == "$gt"  ? Op::kGt
                                     : Op::kGte;
      comparison(parent, kind, path, e);
    } else if (op == "$ne") {
      Predicate* n = add(parent, Op::kNot, "");
      if (n != nullptr) comparison(*n, Op::kEq, path, e);
    } else if (op == "$in" && e.holds_array()) {
      in_list(parent, path, e);
    } else if (op == "$nin" && e.holds_array()) {
      Predicate* n = add(parent, Op::kNot, "");
      if (n != nullptr) in_list(*n, path, e);
    } else if (op == "$exists") {
      if (e.as_bool()) {
        add(parent, Op::kExists, path);
      } else if (Predicate* n = add(parent, Op::kNot, ""); n != nullptr) {
        add(*n, Op::kExists, path);
      }
    } else if (op == "$type") {
      add(parent, Op::kType, path);
    } else if (op == "$mod") {
      add(parent, Op::kMod, path);
    } else if (op == "$regex" || op == "$options") {
      if (!regex_done) add(parent, Op::kRegex, path);
      regex_done = true;
    } else if (op == "$all" && e.holds_array()) {
      // (a == x AND a == y ...); {$all: [{$elemMatch: ..}]} is an $elemMatch per element.
      bool any = false;
      for (BsonElements v(e.container()); v.next();) {
        any = true;
        const BsonView doc = v.container();
        if (v.holds_document() && first_key(doc) == "$elemMatch") {
          operators(parent, path, doc, depth + 1);
        } else {
          comparison(parent, Op::kEq, path, v);
        }
      }
      if (!any) out.uncertain = true;  // $all: [] matches nothing (an EOF plan)
    } else if (op == "$elemMatch" && e.holds_document()) {
      elem_match(parent, path, e.container(), depth + 1);
    } else if (op == "$not") {
      Predicate* n = add(parent, Op::kNot, "");
      if (n == nullptr) continue;
      if (e.type == BSON_TYPE_REGEX) {
        add(*n, Op::kRegex, path);
      } else if (e.holds_document()) {
        Predicate inner;
        inner.op = Op::kAnd;
        operators(inner, path, e.container(), depth + 1);
        // NOT of several operators is NOT(AND): no index bounds come from it.
        if (inner.children.size() == 1) {
          n->children.push_back(std::move(inner.children.front()));
        } else {
          n->op = Op::kUnindexable;
        }
      } else {
        out.uncertain = true;
      }
    } else if (op == "$geoWithin" || op == "$within" || op == "$geoIntersects") {
      Predicate* g =
          add(parent, op == "$geoIntersects" ? Op::kGeoIntersects : Op::kGeoWithin, path);
      if (g == nullptr || !e.holds_document()) continue;
      const std::string_view shape = first_key(e.container());
      g->legacy_shape = shape == "$box" || shape == "$polygon" || shape == "$center";
      g->center_sphere = shape == "$centerSphere";
    } else if (op == "$near" || op == "$nearSphere" || op == "$geoNear") {
      Predicate* n = add(parent, Op::kNear, path);
      if (n != nullptr) {
        n->spherical =
            op == "$nearSphere" || (e.holds_document() && first_key(e.container()) == "$geometry");
        n->legacy_shape = e.holds_array();
      }
      out.near = true;
      out.near_path = path;
    } else if (op == "$maxDistance" || op == "$minDistance") {
      // part of $near
    } else if (op == "$size" || op == "$bitsAllSet" || op == "$bitsAnySet" ||
               op == "$bitsAllClear" || op == "$bitsAnyClear") {
      add(parent, Op::kUnindexable, path);
    } else {
      out.uncertain = true;  // an operator the server may reject or read otherwise
    }
  }
}

void Parser::elem_match(Predicate& parent, std::string_view path, const BsonView& body, int depth) {
  const std::string_view first = first_key(body);
  const bool on_values = is_operator(first) && first != "$and" && first != "$or" &&
                         first != "$nor" && first != "$where" && first != "$expr" &&
                         first != "$text" && first != "$comment";
  Predicate* m = add(parent, on_values ? Op::kElemMatchValue : Op::kElemMatchObject, path);
  if (m == nullptr) return;
  if (on_values) {
    operators(*m, path, body, depth);
  } else {
    const std::string* prefix = intern(path, ".");
    if (prefix != nullptr) conjunction(body, *prefix, *m, depth);
  }
}

void Parser::logical(Predicate& parent, Op op, const BsonElements& clauses, std::string_view prefix,
                     int depth) {
  Predicate* node = add(parent, op, "");
  if (node == nullptr) return;
  for (BsonElements c(clauses.container()); c.next();) {
    if (!c.holds_document()) {
      out.uncertain = true;
      continue;
    }
    Predicate* clause = add(*node, Op::kAnd, "");
    if (clause != nullptr) conjunction(c.container(), prefix, *clause, depth + 1);
  }
}

// The comparisons of a field path with a constant that the server rewrites out of $expr into
// predicates an index can serve ($_internalExprEq and its kin), alone or under $and.
void Parser::expr(Predicate& parent, const BsonView& body, int depth) {
  BsonElements e(body);
  if (!e.next() || depth > kMaxDepth) return;
  const std::string_view op = e.key;
  if (op == "$and" && e.holds_array()) {
    for (BsonElements c(e.container()); c.next();) {
      if (c.holds_document()) expr(parent, c.container(), depth + 1);
    }
    return;
  }
  const bool cmp = op == "$eq" || op == "$lt" || op == "$lte" || op == "$gt" || op == "$gte";
  if (!cmp || !e.holds_array()) return;  // another expression: no index serves it
  BsonElements args(e.container());
  BsonElements left = args, right = args;
  if (!left.next()) return;
  right = left;
  if (!right.next()) return;
  // One side a field path, the other a constant (not an expression, array or document).
  const BsonElements* path_side = nullptr;
  const BsonElements* constant = nullptr;
  auto is_path = [](const BsonElements& v) {
    return v.type == BSON_TYPE_UTF8 && v.utf8().size() > 1 && v.utf8()[0] == '$' &&
           v.utf8()[1] != '$';
  };
  if (is_path(left)) {
    path_side = &left;
    constant = &right;
  } else if (is_path(right)) {
    path_side = &right;
    constant = &left;
  }
  if (path_side == nullptr) return;
  const bool plain = constant->type != BSON_TYPE_ARRAY && constant->type != BSON_TYPE_DOCUMENT &&
                     !(constant->type == BSON_TYPE_UTF8 && is_operator(constant->utf8())) &&
                     constant->type != BSON_TYPE_NULL && constant->type != BSON_TYPE_UNDEFINED;
  if (!plain) {
    out.uncertain = true;
    return;
  }
  const std::string* path = intern("", path_side->utf8().substr(1));
  if (path != nullptr)
    comparison(parent, op == "$eq" ? Op::kExprEq : Op::kExprCmp, *path, *constant);
}

void Parser::conjunction(const BsonView& doc, std::string_view prefix, Predicate& into, int depth) {
  if (depth > kMaxDepth) {
    out.uncertain = true;
    return;
  }
  for (BsonElements e(doc); e.next();) {
    const std::string_view key = e.key;
    if (!is_operator(key)) {
      const std::string* path = intern(prefix, key);
      if (path == nullptr) return;
      field(into, *path, e, depth);
    } else if (key == "$and" && e.holds_array()) {
      // The planner flattens nested conjunctions.
      for (BsonElements c(e.container()); c.next();) {
        if (c.holds_document()) {
          conjunction(c.container(), prefix, into, depth + 1);
        } else {
          out.uncertain = true;
        }
      }
    } else if ((key == "$or" || key == "$nor") && e.holds_array()) {
      const size_t before = into.children.size();
      logical(into, key == "$or" ? Op::kOr : Op::kNor, e, prefix, depth);
      if (into.children.size() == before) continue;
      // A $nor of one clause with one predicate is that predicate negated, which an index can
      // serve like {$not: ...}; an $or of one clause is that clause.
      Predicate& node = into.children.back();
      if (node.children.size() == 1 && node.children.front().children.size() == 1 &&
          (node.op == Op::kOr || node.op == Op::kNor)) {
        Predicate only = std::move(node.children.front().children.front());
        if (node.op == Op::kOr) {
          node = std::move(only);
        } else {
          node.op = Op::kNot;
          node.children.clear();
          node.children.push_back(std::move(only));
        }
      }
    } else if (key == "$text") {
      add(into, Op::kText, "");
      out.text = true;
    } else if (key == "$expr" && e.holds_document()) {
      expr(into, e.container(), depth + 1);
    } else if (key == "$comment") {
      // no predicate
    } else if (key == "$alwaysFalse" && depth == 0) {
      out.always_false = true;
    } else if (key == "$where" || key == "$jsonSchema" || key == "$expr" || key == "$sampleRate") {
      add(into, Op::kUnindexable, "");
    } else {
      out.uncertain = true;  // $alwaysFalse, $alwaysTrue, internal or unknown operators
    }
  }
}

}  // namespace

ParsedFilter parse_filters(const std::vector<codec::BsonView>& filters, size_t max_nodes) {
  size_t filter_bytes = 0;
  for (const codec::BsonView& filter : filters) filter_bytes += filter.size;
  Parser parser(max_nodes, kPathBytesBase + 2 * filter_bytes);
  parser.out.root.op = Op::kAnd;
  for (const codec::BsonView& filter : filters) {
    if (!filter.empty()) parser.conjunction(filter, "", parser.out.root, 0);
  }
  return std::move(parser.out);
}

ParsedFilter parse_filter(const codec::BsonView& filter, size_t max_nodes) {
  return parse_filters({filter}, max_nodes);
}

}  // namespace docguard::rules::planner
