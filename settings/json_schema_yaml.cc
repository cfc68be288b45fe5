#include "json_schema_yaml.h"

#include <bson/bson.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>

#include "docguard/codec/bson_elements.h"

namespace docguard::settings {

using schema::JsonSchema;
using schema::JsonSchemaError;

namespace {

// YAML 1.2 core schema spellings, plus YAML 1.1's yes/no that yaml-cpp users expect.
bool plain_bool(const std::string& s, bool* out) {
  for (const char* t : {"true", "True", "TRUE"}) {
    if (s == t) return *out = true, true;
  }
  for (const char* f : {"false", "False", "FALSE"}) {
    if (s == f) return *out = false, true;
  }
  return false;
}

void append_scalar(const YAML::Node& node, bson_t* parent, const std::string& name) {
  const std::string& s = node.Scalar();
  const char* key = name.c_str();
  const int key_len = static_cast<int>(name.size());
  // A quoted scalar ("1", 'true') is a string, as it is in JSON.
  if (node.Tag() == "!") {
    bson_append_utf8(parent, key, key_len, s.data(), static_cast<int>(s.size()));
    return;
  }
  bool b = false;
  if (plain_bool(s, &b)) {
    bson_append_bool(parent, key, key_len, b);
    return;
  }
  if (s == "null" || s == "~" || s == "Null" || s == "NULL") {
    bson_append_null(parent, key, key_len);
    return;
  }
  int64_t i = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
  if (ec == std::errc() && p == s.data() + s.size() && !s.empty()) {
    if (i >= std::numeric_limits<int32_t>::min() && i <= std::numeric_limits<int32_t>::max()) {
      bson_append_int32(parent, key, key_len, static_cast<int32_t>(i));
    } else {
      bson_append_int64(parent, key, key_len, i);
    }
    return;
  }
  static const std::regex kFloat(R"([-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?)");
  if (std::regex_match(s, kFloat)) {
    bson_append_double(parent, key, key_len, std::strtod(s.c_str(), nullptr));
    return;
  }
  bson_append_utf8(parent, key, key_len, s.data(), static_cast<int>(s.size()));
}

void append_node(const ConfigReader& reader, const YAML::Node& node, bson_t* parent,
                 const std::string& name, const std::string& key, int depth) {
  if (depth > 100) reader.fail(node, key, "nested too deep");
  const char* k = name.c_str();
  const int k_len = static_cast<int>(name.size());
  if (node.IsMap()) {
    bson_t child;
    bson_append_document_begin(parent, k, k_len, &child);
    for (const auto& kv : node) {
      const std::string field = kv.first.Scalar();
      append_node(reader, kv.second, &child, field, key + "." + field, depth + 1);
    }
    bson_append_document_end(parent, &child);
  } else if (node.IsSequence()) {
    bson_t child;
    bson_append_array_begin(parent, k, k_len, &child);
    for (size_t i = 0; i < node.size(); ++i) {
      append_node(reader, node[i], &child, std::to_string(i), key + "[" + std::to_string(i) + "]",
                  depth + 1);
    }
    bson_append_array_end(parent, &child);
  } else if (node.IsScalar()) {
    append_scalar(node, parent, name);
  } else {
    bson_append_null(parent, k, k_len);
  }
}

// The YAML node a keyword path ("properties.price.bsonType", "allOf.1") names, for its line.
YAML::Node locate(const YAML::Node& root, const std::string& keyword_path) {
  YAML::Node at = root;
  size_t start = 0;
  while (start <= keyword_path.size() && !keyword_path.empty()) {
    const size_t dot = keyword_path.find('.', start);
    const std::string part =
        keyword_path.substr(start, dot == std::string::npos ? dot : dot - start);
    YAML::Node next;
    if (at.IsMap()) {
      for (const auto& kv : at) {
        if (kv.first.Scalar() == part) next = dot == std::string::npos ? kv.first : kv.second;
      }
    } else if (at.IsSequence()) {
      size_t i = 0;
      auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), i);
      if (ec == std::errc() && i < at.size()) next = at[i];
    }
    if (!next.IsDefined() || next.IsNull()) return at;
    at = next;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return at;
}

// A validator's keys beside $jsonSchema are query operators ({status: {$in: [...]}}): docguard
// judges only the $jsonSchema, so such a validator is refused rather than half applied.
std::string first_key_beside_schema(const codec::BsonView& validator) {
  codec::BsonElements it(validator);
  while (it.next()) {
    if (it.key != "$jsonSchema") return std::string(it.key);
  }
  return "";
}

std::string beside_schema_message(const std::string& where, const std::string& key) {
  return "'" + where + key +
         "' beside $jsonSchema: query operators in a validator are not judged by docguard "
         "(put the condition in the $jsonSchema, or keep it on the server)";
}

// The $jsonSchema in a validator file: {$jsonSchema}, {validator: {$jsonSchema}, validationLevel,
// validationAction} (what `docguard validator` writes), or the schema itself.
codec::BsonView unwrap(const ConfigReader& reader, const YAML::Node& node, const std::string& key,
                       const bson_t* doc, ValidatorFile* out) {
  const codec::BsonView whole{bson_get_data(doc), doc->len};
  codec::BsonElements it(whole);
  if (it.find("$jsonSchema") && it.holds_document()) {
    const std::string other = first_key_beside_schema(whole);
    if (!other.empty()) reader.fail(node, key, beside_schema_message("", other));
    return it.container();
  }
  codec::BsonElements wrapped(whole);
  if (!wrapped.find("validator")) return whole;
  const codec::BsonView validator =
      wrapped.holds_document() ? wrapped.container() : codec::BsonView{};
  codec::BsonElements schema(validator);
  if (!schema.find("$jsonSchema") || !schema.holds_document()) {
    reader.fail(node, key, "'validator' must be a document holding $jsonSchema");
  }
  const std::string other = first_key_beside_schema(validator);
  if (!other.empty()) reader.fail(node, key, beside_schema_message("validator.", other));
  const auto text = [&](const char* name, std::initializer_list<const char*> allowed) {
    codec::BsonElements f(whole);
    if (!f.find(name)) return std::string();
    // The text up to its first NUL, as libbson's C string gives it.
    std::string value = f.holds_utf8() ? f.utf8().data() : "";
    for (const char* a : allowed) {
      if (value == a) return value;
    }
    std::string names;
    for (const char* a : allowed) names += std::string(names.empty() ? "" : ", ") + a;
    reader.fail(node, key, std::string(name) + " must be one of " + names);
  };
  out->level = text("validationLevel", {"strict", "moderate", "off"});
  // errorAndLog (8.1): refuses as error does, and the server also logs the failure.
  out->action = text("validationAction", {"error", "warn", "errorAndLog"});
  return schema.container();
}

}  // namespace

std::vector<uint8_t> yaml_to_bson(const ConfigReader& reader, const YAML::Node& node,
                                  const std::string& key) {
  if (!node.IsMap()) reader.fail(node, key, "expected a mapping (the $jsonSchema document)");
  bson_t wrapper = BSON_INITIALIZER;
  append_node(reader, node, &wrapper, "s", key, 0);
  std::vector<uint8_t> out;
  codec::BsonElements it(&wrapper);
  if (it.find("s") && it.holds_document()) out.assign(it.value, it.value + it.value_size);
  bson_destroy(&wrapper);
  return out;
}

std::shared_ptr<const JsonSchema> inline_json_schema(const ConfigReader& reader,
                                                     const YAML::Node& node,
                                                     const std::string& key) {
  const std::vector<uint8_t> bson = yaml_to_bson(reader, node, key);
  // A rule may hold the validator as `docguard validator` prints it: {$jsonSchema: {...}}.
  YAML::Node schema_node = node;
  if (node.IsMap() && node["$jsonSchema"]) {
    for (const auto& kv : node) {
      const std::string name = kv.first.as<std::string>();
      if (name != "$jsonSchema")
        reader.fail(kv.first, key + "." + name, beside_schema_message("", name));
    }
    schema_node = node["$jsonSchema"];
  }
  bson_t doc;
  if (!bson_init_static(&doc, bson.data(), bson.size())) reader.fail(node, key, "invalid");
  ValidatorFile ignored;
  try {
    return JsonSchema::compile(unwrap(reader, node, key, &doc, &ignored));
  } catch (const JsonSchemaError& e) {
    const std::string& path = e.keyword_path();
    reader.fail(locate(schema_node, path), path.empty() ? key : key + "." + path, e.what());
  }
}

ValidatorFile file_json_schema(const ConfigReader& reader, const YAML::Node& node,
                               const std::string& key) {
  const std::string name = reader.scalar(node, key);
  if (name.empty()) reader.fail(node, key, "must name a JSON file");
  std::string path = name;
  if (name.front() != '/') {
    const std::string& config = reader.file();
    const size_t slash = config.rfind('/');
    if (slash != std::string::npos) path = config.substr(0, slash + 1) + name;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) reader.fail(node, key, "cannot read '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  const std::string json = text.str();
  bson_error_t error;
  bson_t* doc = bson_new_from_json(reinterpret_cast<const uint8_t*>(json.data()),
                                   static_cast<ssize_t>(json.size()), &error);
  if (doc == nullptr) {
    reader.fail(node, key, "'" + path + "' is not a JSON document: " + error.message);
  }
  // Freed on every way out, the configuration errors unwrap() throws included.
  struct Owned {
    bson_t* doc;
    ~Owned() { bson_destroy(doc); }
  } const owned{doc};
  try {
    ValidatorFile out;
    out.schema = JsonSchema::compile(unwrap(reader, node, key, doc, &out));
    return out;
  } catch (const JsonSchemaError& e) {
    reader.fail(node, key, "in '" + path + "': " + e.what());
  }
}

}  // namespace docguard::settings
