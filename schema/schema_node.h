// A compiled $jsonSchema: one Node per (sub)schema, each keyword already checked and turned
// into what judging needs (type masks, numbers, compiled regexes, sorted property tables).
// Private to schema/.
#pragma once

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema_numbers.h"
#include "schema_values.h"

namespace docguard::schema {

// A `pattern` or `patternProperties` key, compiled once (JIT when available), as the server
// compiles them: a value's `pattern` in UTF mode, a field-name pattern on bytes; at most
// kMaxLength bytes. A match that reaches the server's heap limit does not match, as there.
class Regex {
 public:
  enum Mode : uint8_t { kValue, kFieldName };
  static constexpr size_t kMaxLength = 32'764;
  // Throws std::invalid_argument with PCRE2's message.
  Regex(std::string source, Mode mode);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  bool matches(std::string_view text) const;
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  pcre2_code* code_ = nullptr;
};

struct Node;

struct Property {
  std::string name;
  std::unique_ptr<Node> schema;  // null: named by `required` only
  int32_t required_index = -1;   // its position in Node::required, -1 if not required
  // A dotted name: the server's parser reads it as a path into sub-documents for `properties`
  // and `required`, and as a literal name only for additionalProperties.
  bool dotted = false;
};

struct PatternProperty {
  std::unique_ptr<Regex> regex;
  std::unique_ptr<Node> schema;
};

struct Dependency {
  std::string property;
  std::vector<std::string> required;  // property dependency
  std::unique_ptr<Node> schema;       // schema dependency
};

enum class Additional : uint8_t { kAbsent, kAllowed, kForbidden, kSchema };

struct Node {
  // The subschema as written, for specifiedAs (read only when explaining a failure).
  std::vector<uint8_t> source;
  std::string title, description;
  bool has_title = false, has_description = false;
  // Some keyword besides title and description: the subschema constrains what it judges.
  bool constrains = false;

  // type / bsonType
  bool has_type = false;
  bool type_is_bson = false;  // bsonType rather than type
  bool single_type = false;   // one type name ("number" included)
  TypeMask types = 0;

  // scalars
  std::unique_ptr<Regex> pattern;
  std::optional<uint64_t> max_length, min_length;
  std::optional<DecimalParts> multiple_of;  // as the server's Decimal128 divisor
  std::optional<Number> maximum, minimum;
  bool exclusive_maximum = false, exclusive_minimum = false;

  // arrays
  std::optional<uint64_t> max_items, min_items;
  bool unique_items = false;
  std::unique_ptr<Node> items;  // items: {schema}
  std::vector<Node> item_list;  // items: [schemas]
  bool has_item_list = false;
  Additional additional_items = Additional::kAbsent;  // only with item_list
  std::unique_ptr<Node> additional_items_schema;

  // objects
  std::vector<Property> properties;  // sorted by name; includes names only `required`
  bool has_dotted_properties = false;
  std::vector<std::string> required;  // as written
  bool has_properties = false;
  std::vector<PatternProperty> pattern_properties;
  Additional additional_properties = Additional::kAbsent;
  std::unique_ptr<Node> additional_properties_schema;
  std::optional<uint64_t> max_properties, min_properties;
  std::vector<Dependency> dependencies;

  // logic
  std::vector<Node> all_of, any_of, one_of;
  std::unique_ptr<Node> not_schema;
  std::vector<uint8_t> enum_values;  // BSON array; empty when absent
  bool root = false;                 // the top-level schema, which judges whole documents

  // Whether any keyword constrains an object's own fields beyond properties (what an update
  // of one path cannot judge without the stored document).
  bool has_whole_object_keywords() const {
    return !all_of.empty() || !any_of.empty() || !one_of.empty() || not_schema ||
           !enum_values.empty() || !dependencies.empty() || max_properties || min_properties;
  }
  const Property* property(std::string_view name) const;
  bool is_required(std::string_view name) const {
    const Property* p = property(name);
    return p != nullptr && p->required_index >= 0;
  }
};

// A name of `properties`, `required` or `dependencies` in `object`, as the server's parser reads
// it: a dotted name is a path into sub-documents. Existence crosses arrays as a query's $exists
// does (an element, or a numeric position); a value to judge is only looked for through
// documents, and a path through an array is kUncertain (docguard then does not judge it).
bool path_exists(const Value& object, std::string_view name);
enum class At : uint8_t { kAbsent, kFound, kUncertain };
At value_at(const Value& object, std::string_view name, Value* out);

// Judging (schema_match.cc): whether `v` satisfies `node`; no allocation.
bool node_matches(const Node& node, const Value& v);
// One numeric keyword on a number (shared by judging and explaining).
bool multiple_of_holds(const Node& node, const Number& x);
bool maximum_holds(const Node& node, const Number& x);
bool minimum_holds(const Node& node, const Number& x);

}  // namespace docguard::schema
