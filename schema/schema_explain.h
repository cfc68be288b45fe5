// The server's details entries for one value against one subschema (schema_explain.cc).
// Private to schema/.
#pragma once

#include <bson/bson.h>

#include "schema_values.h"

namespace docguard::schema {

struct Node;

// Appends to the open BSON array `array` one entry per keyword of `node` that `v` fails.
void explain_entries(const Node& node, const Value& v, bson_t* array);

// Appends to `out` the entries an operator update's failing paths produced (`entries`, one per
// path), merged into one entry per keyword in the server's order (schema_update_details.cc).
void merge_update_entries(const bson_t* entries, bson_t* out);

}  // namespace docguard::schema
