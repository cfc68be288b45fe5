// $jsonSchema -> Node tree. Every keyword is checked as the server checks it when a validator
// is set (a keyword's own value: schema_keywords.cc); what the server refuses, and what docguard
// does not judge, is refused with the keyword's path, so a schema is applied whole or not at all.
#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

#include "docguard/schema/json_schema.h"
#include "schema_keywords.h"
#include "schema_node.h"

namespace docguard::schema {

using schema::Additional;
using schema::bool_value;
using schema::check_keyword;
using schema::compile_required;
using schema::compile_types;
using schema::count_value;
using schema::fail;
using schema::join;
using schema::Node;
using schema::number_value;
using schema::property_slot;
using schema::string_value;
using schema::Value;

namespace {

// Deeper schemas are refused: judging recurses once per level.
constexpr int kMaxDepth = 32;
constexpr size_t kMaxNodes = 20'000;

class Compiler {
 public:
  size_t nodes = 0;

  void compile(const codec::BsonView& doc, Node* node, const std::string& path, int depth) {
    if (depth > kMaxDepth) fail(path, "nested more than " + std::to_string(kMaxDepth) + " levels");
    if (++nodes > kMaxNodes) fail(path, "more than " + std::to_string(kMaxNodes) + " subschemas");
    node->source.assign(doc.data, doc.data + doc.size);
    std::set<std::string_view> seen;
    // Elements by keyword, read after the walk so that their order in the file does not matter.
    struct Found {
      std::string_view key;
      Value v;
    };
    std::vector<Found> found;
    for (codec::BsonElements e(doc); e.next();) {
      const std::string_view key = e.key;
      const std::string here = join(path, key);
      check_keyword(key, here);
      if (!seen.insert(key).second) {
        fail(here, "duplicate $jsonSchema keyword '" + std::string(key) + "'");
      }
      found.push_back({key, Value::of(e)});
      if (key != "title" && key != "description") node->constrains = true;
    }
    auto get = [&](std::string_view k) -> const Value* {
      for (const auto& f : found) {
        if (f.key == k) return &f.v;
      }
      return nullptr;
    };

    if (const Value* v = get("title")) {
      node->title = std::string(string_value(*v, join(path, "title")));
      node->has_title = true;
    }
    if (const Value* v = get("description")) {
      node->description = std::string(string_value(*v, join(path, "description")));
      node->has_description = true;
    }
    const Value* type = get("type");
    const Value* bson_type = get("bsonType");
    if (type && bson_type) {
      fail(path, "cannot specify both $jsonSchema keywords 'type' and 'bsonType'");
    }
    if (type) compile_types(*type, join(path, "type"), false, node);
    if (bson_type) compile_types(*bson_type, join(path, "bsonType"), true, node);

    // Scalars.
    if (const Value* v = get("pattern")) {
      const std::string here = join(path, "pattern");
      try {
        node->pattern = std::make_unique<schema::Regex>(std::string(string_value(*v, here)),
                                                        schema::Regex::kValue);
      } catch (const std::invalid_argument& e) {
        fail(here, std::string("invalid regular expression: ") + e.what());
      }
    }
    if (const Value* v = get("maxLength"))
      node->max_length = count_value(*v, join(path, "maxLength"));
    if (const Value* v = get("minLength"))
      node->min_length = count_value(*v, join(path, "minLength"));
    if (const Value* v = get("multipleOf")) {
      // The server's divisor is the value as a Decimal128: positive, finite, not NaN. At the
      // top level the keyword never applies (the document is not a number), and the server
      // accepts an infinite or NaN divisor there without using it.
      const std::string here = join(path, "multipleOf");
      const schema::Number number = number_value(*v, here);
      const auto divisor = schema::to_decimal128(number);
      if (!divisor) {
        const bool negative = number.kind == schema::Number::Kind::kInfinite && number.negative;
        if (negative) fail(here, "must have a positive value");
        if (!path.empty()) {
          fail(here, number.kind == schema::Number::Kind::kNaN ? "divisor cannot be NaN"
                                                               : "divisor cannot be infinite");
        }
      } else if (divisor->negative || divisor->coefficient == 0) {
        fail(here, "must have a positive value");
      } else {
        node->multiple_of = *divisor;
      }
    }
    bounds(get("maximum"), get("exclusiveMaximum"), path, "maximum", "exclusiveMaximum",
           &node->maximum, &node->exclusive_maximum);
    bounds(get("minimum"), get("exclusiveMinimum"), path, "minimum", "exclusiveMinimum",
           &node->minimum, &node->exclusive_minimum);

    // Arrays.
    if (const Value* v = get("maxItems")) node->max_items = count_value(*v, join(path, "maxItems"));
    if (const Value* v = get("minItems")) node->min_items = count_value(*v, join(path, "minItems"));
    if (const Value* v = get("uniqueItems")) {
      node->unique_items = bool_value(*v, join(path, "uniqueItems"));
    }
    if (const Value* v = get("items")) {
      const std::string here = join(path, "items");
      if (v->is_document()) {
        node->items = std::make_unique<Node>();
        compile(v->container(), node->items.get(), here, depth + 1);
      } else if (v->is_array()) {
        node->has_item_list = true;
        size_t i = 0;
        for (codec::BsonElements e(v->data, v->size); e.next(); ++i) {
          const std::string item = here + "." + std::to_string(i);
          if (!e.holds_document()) fail(item, "each 'items' entry must be an object");
          compile(e.container(), &node->item_list.emplace_back(), item, depth + 1);
        }
      } else {
        fail(here, "must be an object or an array of objects");
      }
    }
    if (const Value* v = get("additionalItems")) {
      const std::string here = join(path, "additionalItems");
      // Without a list of `items`, the server accepts and ignores additionalItems (draft 4).
      const bool applies = node->has_item_list;
      if (v->type == BSON_TYPE_BOOL) {
        if (applies)
          node->additional_items = v->data[0] ? Additional::kAllowed : Additional::kForbidden;
      } else if (v->is_document()) {
        auto sub = std::make_unique<Node>();
        compile(v->container(), sub.get(), here, depth + 1);
        if (applies) {
          node->additional_items = Additional::kSchema;
          node->additional_items_schema = std::move(sub);
        }
      } else {
        fail(here, "must be a boolean or an object");
      }
    }

    // Objects.
    if (const Value* v = get("required")) compile_required(*v, join(path, "required"), node);
    if (const Value* v = get("properties")) {
      const std::string here = join(path, "properties");
      if (!v->is_document()) fail(here, "must be an object");
      node->has_properties = true;
      for (codec::BsonElements e(v->data, v->size); e.next();) {
        const std::string prop = join(here, e.key);
        if (!e.holds_document()) fail(prop, "each property's schema must be an object");
        schema::Property* p = property_slot(node, e.key);
        if (p->schema) fail(prop, "duplicate property");
        p->schema = std::make_unique<Node>();
        compile(e.container(), p->schema.get(), prop, depth + 1);
      }
    }
    std::sort(node->properties.begin(), node->properties.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    if (const Value* v = get("patternProperties")) {
      const std::string here = join(path, "patternProperties");
      if (!v->is_document()) fail(here, "must be an object");
      for (codec::BsonElements e(v->data, v->size); e.next();) {
        const std::string prop = join(here, e.key);
        if (!e.holds_document()) fail(prop, "each pattern's schema must be an object");
        schema::PatternProperty pp;
        try {
          pp.regex = std::make_unique<schema::Regex>(std::string(e.key), schema::Regex::kFieldName);
        } catch (const std::invalid_argument& ex) {
          fail(prop, std::string("invalid regular expression: ") + ex.what());
        }
        pp.schema = std::make_unique<Node>();
        compile(e.container(), pp.schema.get(), prop, depth + 1);
        node->pattern_properties.push_back(std::move(pp));
      }
    }
    if (const Value* v = get("additionalProperties")) {
      const std::string here = join(path, "additionalProperties");
      if (v->type == BSON_TYPE_BOOL) {
        node->additional_properties = v->data[0] ? Additional::kAllowed : Additional::kForbidden;
      } else if (v->is_document()) {
        node->additional_properties = Additional::kSchema;
        node->additional_properties_schema = std::make_unique<Node>();
        compile(v->container(), node->additional_properties_schema.get(), here, depth + 1);
      } else {
        fail(here, "must be a boolean or an object");
      }
    }
    if (const Value* v = get("maxProperties")) {
      node->max_properties = count_value(*v, join(path, "maxProperties"));
    }
    if (const Value* v = get("minProperties")) {
      node->min_properties = count_value(*v, join(path, "minProperties"));
    }
    if (const Value* v = get("dependencies")) compile_dependencies(*v, path, node, depth);

    // Logic.
    list_of_schemas(get("allOf"), join(path, "allOf"), &node->all_of, depth);
    list_of_schemas(get("anyOf"), join(path, "anyOf"), &node->any_of, depth);
    list_of_schemas(get("oneOf"), join(path, "oneOf"), &node->one_of, depth);
    if (const Value* v = get("not")) {
      if (!v->is_document()) fail(join(path, "not"), "must be an object");
      node->not_schema = std::make_unique<Node>();
      compile(v->container(), node->not_schema.get(), join(path, "not"), depth + 1);
    }
    if (const Value* v = get("enum")) {
      if (!v->is_array() || schema::element_count(*v) == 0) {
        fail(join(path, "enum"), "must be a non-empty array");
      }
      if (schema::first_duplicate(*v)) {
        fail(join(path, "enum"), "array cannot contain duplicate values");
      }
      node->enum_values.assign(v->data, v->data + v->size);
    }
  }

 private:
  void bounds(const Value* bound, const Value* exclusive, const std::string& path, const char* name,
              const char* exclusive_name, std::optional<schema::Number>* out, bool* exclusive_out) {
    if (exclusive != nullptr) {
      *exclusive_out = bool_value(*exclusive, join(path, exclusive_name));
      if (bound == nullptr) {
        fail(join(path, exclusive_name),
             std::string("'") + name + "' must be present if '" + exclusive_name + "' is");
      }
    }
    if (bound != nullptr) *out = number_value(*bound, join(path, name));
  }

  void compile_dependencies(const Value& v, const std::string& path, Node* node, int depth) {
    const std::string here = join(path, "dependencies");
    if (!v.is_document()) fail(here, "must be an object");
    for (codec::BsonElements e(v.data, v.size); e.next();) {
      const std::string dep = join(here, e.key);
      // The server's parser reads a string under `title` or `description` as an annotation of
      // the dependencies keyword itself, not as a dependency.
      if (e.type == BSON_TYPE_UTF8 && (e.key == "title" || e.key == "description")) continue;
      schema::Dependency d;
      d.property = std::string(e.key);
      if (e.holds_document()) {
        d.schema = std::make_unique<Node>();
        compile(e.container(), d.schema.get(), dep, depth + 1);
      } else if (e.holds_array()) {
        std::set<std::string_view> names;
        for (codec::BsonElements n(e.value, e.value_size); n.next();) {
          if (n.type != BSON_TYPE_UTF8) fail(dep, "array elements must be strings");
          if (!names.insert(n.utf8()).second) fail(dep, "array must not contain duplicates");
          d.required.emplace_back(n.utf8());
        }
        if (d.required.empty()) fail(dep, "must be a non-empty array");
      } else {
        fail(dep, "must be an object or an array of strings");
      }
      node->dependencies.push_back(std::move(d));
    }
  }

  void list_of_schemas(const Value* v, const std::string& path, std::vector<Node>* out, int depth) {
    if (v == nullptr) return;
    if (!v->is_array()) fail(path, "must be an array of objects");
    size_t i = 0;
    for (codec::BsonElements e(v->data, v->size); e.next(); ++i) {
      const std::string item = path + "." + std::to_string(i);
      if (!e.holds_document()) fail(item, "must be an object");
      compile(e.container(), &out->emplace_back(), item, depth + 1);
    }
    if (out->empty()) fail(path, "must be a non-empty array");
  }
};

}  // namespace

std::shared_ptr<const JsonSchema> JsonSchema::compile(const codec::BsonView& doc) {
  if (doc.empty() || doc.size < 5) throw JsonSchemaError("", "$jsonSchema must be an object");
  bson_t b;
  if (!bson_init_static(&b, doc.data, doc.size) ||
      !bson_validate(&b, BSON_VALIDATE_NONE, nullptr)) {
    throw JsonSchemaError("", "$jsonSchema is not valid BSON");
  }
  std::shared_ptr<JsonSchema> out(new JsonSchema());
  out->root_ = std::make_unique<schema::Node>();
  out->root_->root = true;
  Compiler c;
  c.compile(doc, out->root_.get(), "", 0);
  out->node_count_ = c.nodes;
  const schema::Node& root = *out->root_;
  out->always_false_ = root.has_type && (root.types & schema::type_bit(BSON_TYPE_DOCUMENT)) == 0;
  return out;
}

JsonSchema::~JsonSchema() = default;

codec::BsonView JsonSchema::source() const {
  return {root_->source.data(), static_cast<uint32_t>(root_->source.size())};
}

}  // namespace docguard::schema
