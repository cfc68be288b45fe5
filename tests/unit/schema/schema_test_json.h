// What the $jsonSchema tests share: a document written as JSON, and a schema compiled from JSON.
#pragma once

#include <bson/bson.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "docguard/schema/json_schema.h"

namespace docguard::schema::schema_test {

// A document from (extended) JSON, owned for the test's scope; bad JSON fails the test.
struct Json {
  explicit Json(const std::string& json) {
    bson_error_t error;
    b = bson_new_from_json(reinterpret_cast<const uint8_t*>(json.data()),
                           static_cast<ssize_t>(json.size()), &error);
    if (b == nullptr) ADD_FAILURE() << "bad JSON in test: " << json << ": " << error.message;
  }
  ~Json() {
    if (b != nullptr) bson_destroy(b);
  }
  Json(const Json&) = delete;
  Json& operator=(const Json&) = delete;
  codec::BsonView view() const { return {bson_get_data(b), b->len}; }
  bson_t* b = nullptr;
};

inline std::shared_ptr<const JsonSchema> compile(const std::string& schema) {
  Json s(schema);
  return JsonSchema::compile(s.view());
}

inline bool matches(const std::string& schema, const std::string& doc) {
  Json d(doc);
  return compile(schema)->matches(d.view());
}

}  // namespace docguard::schema::schema_test
