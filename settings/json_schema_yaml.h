// The rule keys that carry a $jsonSchema: `json_schema:` (the schema inline, as YAML) and
// `json_schema_file:` (a JSON file holding the schema, {$jsonSchema: ...}, or what `docguard
// validator` writes: {collMod, validator: {$jsonSchema: ...}, ...}). Both compile at load, so
// a schema docguard cannot judge fails the configuration (and --check-config) with its line.
#pragma once

#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>
#include <vector>

#include "config_reader.h"
#include "docguard/schema/json_schema.h"

namespace docguard::settings {

// The YAML mapping as BSON: mappings are documents, sequences arrays; plain scalars are
// booleans, null, integers (int32, else int64) or doubles when they read as such, quoted ones
// always strings. Throws ConfigError (through `reader`) on what BSON cannot hold.
std::vector<uint8_t> yaml_to_bson(const ConfigReader& reader, const YAML::Node& node,
                                  const std::string& key);

// `json_schema: {...}` compiled; errors name the keyword's own line.
std::shared_ptr<const schema::JsonSchema> inline_json_schema(const ConfigReader& reader,
                                                             const YAML::Node& node,
                                                             const std::string& key);
// A validator file: its schema, and the collection options `docguard validator` writes beside
// it ("" when absent): validationLevel (strict, moderate, off), validationAction (error, warn,
// errorAndLog).
struct ValidatorFile {
  std::shared_ptr<const schema::JsonSchema> schema;
  std::string level, action;
};
// `json_schema_file: path` (relative to the configuration file's folder) compiled. A validator
// with query operators beside $jsonSchema is refused, naming the operator's key.
ValidatorFile file_json_schema(const ConfigReader& reader, const YAML::Node& node,
                               const std::string& key);

}  // namespace docguard::settings
