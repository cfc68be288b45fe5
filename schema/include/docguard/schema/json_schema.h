// A `$jsonSchema` validator judged by docguard itself, on the server's semantics: compiled once
// when the configuration loads (every keyword checked, anything the server would refuse or
// docguard does not support refused, never half applied), then judged per written document
// without allocating, and explained, only when a document fails, with the errInfo.details the
// server writes for code 121 DocumentValidationFailure:
//   {operatorName: "$jsonSchema", title?, description?, schemaRulesNotSatisfied: [...]}
//
// Keywords: bsonType (with the aliases, "number" included), type (not "integer"), required,
// properties, patternProperties, additionalProperties, enum, minimum/maximum with
// exclusiveMinimum/exclusiveMaximum, multipleOf, minLength/maxLength (code points), pattern
// (PCRE2), items (one schema or a list), additionalItems, minItems/maxItems, uniqueItems,
// minProperties/maxProperties, dependencies, allOf/anyOf/oneOf/not, title, description.
#pragma once

#include <bson/bson.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/base/error.h"
#include "docguard/codec/bson_view.h"

namespace docguard::schema {

struct Node;

// A schema docguard cannot judge as the server would. `keyword_path()` names where, e.g.
// "properties.price.format"; what() reads "properties.price.format: unsupported keyword ...".
class JsonSchemaError : public std::runtime_error {
 public:
  JsonSchemaError(std::string keyword_path, const std::string& what)
      : std::runtime_error((keyword_path.empty() ? std::string("(top level)") : keyword_path) +
                           ": " + what),
        keyword_path_(std::move(keyword_path)) {}
  const std::string& keyword_path() const { return keyword_path_; }
  // A schema that cannot be used as written: kind kBadInput, the keyword path as its subject.
  base::Error error() const {
    return base::Error{base::ErrorKind::kBadInput, base::ErrorSource::kConfiguration, what(),
                       keyword_path_};
  }

 private:
  std::string keyword_path_;
};

// How much of the server's errInfo a failure carries (the server's size rule): everything; the
// details without specifiedAs ("truncated": true beside them); or only a note that the
// detailed error was too large.
enum class DetailsSize : uint8_t { kFull, kTruncated, kTooLarge };
// The server's bound on one validation error's size.
inline constexpr size_t kMaxValidationErrorBytes = size_t{12} * 1024 * 1024;

// What an operator update's change does to a schema, judged without the stored document.
enum class UpdateJudgement { kPass, kFail, kUnjudged };

// The top-level property names a failure's details are about (properties, required,
// additionalProperties, patternProperties, dependencies), each once, in order: what the census
// counts as the properties failing most.
std::vector<std::string> failing_properties(const codec::BsonView& details);

class JsonSchema {
 public:
  // Compiles the $jsonSchema document (the value of `$jsonSchema`). Throws JsonSchemaError.
  static std::shared_ptr<const JsonSchema> compile(const codec::BsonView& schema);
  ~JsonSchema();
  JsonSchema(const JsonSchema&) = delete;
  JsonSchema& operator=(const JsonSchema&) = delete;

  // Whether a whole document (insert, replacement) satisfies the schema. Hot path.
  bool matches(const codec::BsonView& document) const;
  // The server's details for a document that does not match, appended to `parent` as `key`.
  void explain(const codec::BsonView& document, bson_t* parent, const char* key) const;
  // The same within `limit` bytes, as the server bounds its errors: a second attempt without
  // specifiedAs, then nothing (kTooLarge: nothing is appended).
  DetailsSize explain_within(const codec::BsonView& document, size_t limit, bson_t* parent,
                             const char* key) const;

  // An operator update ({$set: ...}, {$unset: ...}, ...) judged on what it changes: values
  // set against the schema of their path, removed fields against `required`; a change whose
  // result depends on the stored document (an $inc, a $push, a path under a keyword that
  // looks at the whole object) is kUnjudged unless nothing in the schema constrains its path.
  // A failure is kFail only when every stored document the update could apply to would fail
  // (a removal under an object that may be absent, or a $set that may create the parent, is
  // kUnjudged). $setOnInsert applies only when the update inserts: ignored without `upsert`,
  // and with it kUnjudged at most (a matched document never sees it).
  // On kFail, `details` (when not null) receives the server-shaped details of the failure.
  UpdateJudgement judge_update(const codec::BsonView& update, bool upsert, bson_t* details) const;

  // The schema as compiled (the $jsonSchema value), e.g. for collMod.
  codec::BsonView source() const;
  // Number of subschemas, for messages and limits.
  size_t node_count() const { return node_count_; }

 private:
  JsonSchema() = default;
  std::unique_ptr<schema::Node> root_;
  size_t node_count_ = 0;
  // The top-level type excludes "object": the server's validator then matches nothing.
  bool always_false_ = false;
};

}  // namespace docguard::schema
