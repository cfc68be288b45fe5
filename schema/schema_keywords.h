// Private to schema/: the checks of one $jsonSchema keyword's value, shared by the
// compiler (schema_compile.cc): which keywords exist, what each keyword's value must be (with
// the server's error texts), the type names, and `required`. Each check throws JsonSchemaError
// with the keyword's path.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "schema_node.h"

namespace docguard::schema {

[[noreturn]] void fail(const std::string& path, const std::string& what);

// "path.key", or "key" at the top.
inline std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

// Refuses a keyword the server refuses or docguard does not judge; `here` is its path.
void check_keyword(std::string_view key, const std::string& here);

std::string_view string_value(const Value& v, const std::string& path);
bool bool_value(const Value& v, const std::string& path);
// Any number, NaN included (the server accepts NaN as a bound).
Number number_value(const Value& v, const std::string& path);
// A non-negative integer, of any numeric type (the server: representable as a long).
uint64_t count_value(const Value& v, const std::string& path);

// `type` (bson false) or `bsonType` (bson true): a name or a list of names.
void compile_types(const Value& v, const std::string& path, bool bson, Node* node);
// The node's entry for property `name`, added when it has none yet.
Property* property_slot(Node* node, std::string_view name);
void compile_required(const Value& v, const std::string& path, Node* node);

}  // namespace docguard::schema
