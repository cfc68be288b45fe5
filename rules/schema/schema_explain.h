// The server's details entries for one value against one subschema (schema_explain.cc).
// Private to rules/schema/.
#pragma once

#include <bson/bson.h>

#include "schema_values.h"

namespace docguard::rules::schema {

struct Node;

// Appends to the open BSON array `array` one entry per keyword of `node` that `v` fails.
void explain_entries(const Node& node, const Value& v, bson_t* array);

}  // namespace docguard::rules::schema
