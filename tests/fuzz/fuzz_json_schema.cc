// The $jsonSchema reader and evaluator: any schema text either compiles or is refused with a
// JsonSchemaError, and whatever document bytes arrive (a client's, unvalidated), judging,
// explaining and judging as an update never read out of bounds nor recurse without bound.
// Input: a schema as JSON text, a NUL byte, then the document's bytes.
#include <bson/bson.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "docguard/codec/bson_view.h"
#include "docguard/schema/json_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace docguard;
  if (size > (1u << 16)) return 0;
  const auto* nul = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  if (nul == nullptr) return 0;
  const size_t text_size = static_cast<size_t>(nul - data);
  bson_error_t error;
  bson_t* schema_doc = bson_new_from_json(data, static_cast<ssize_t>(text_size), &error);
  if (schema_doc == nullptr) return 0;
  std::shared_ptr<const schema::JsonSchema> schema;
  try {
    schema = schema::JsonSchema::compile({bson_get_data(schema_doc), schema_doc->len});
  } catch (const schema::JsonSchemaError&) {
  }
  bson_destroy(schema_doc);
  if (!schema) return 0;
  std::vector<uint8_t> doc(nul + 1, data + size);
  if (doc.size() < 5) return 0;
  const auto n = static_cast<uint32_t>(doc.size());
  std::memcpy(doc.data(), &n, 4);  // framing right, so elements get explored
  const codec::BsonView view{doc.data(), n};
  const bool ok = schema->matches(view);
  bson_t out = BSON_INITIALIZER;
  if (!ok) schema->explain(view, &out, "details");
  bson_reinit(&out);
  (void)schema->judge_update(view, true, &out);
  bson_destroy(&out);
  return 0;
}
