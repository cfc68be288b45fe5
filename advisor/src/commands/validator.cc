#include "docguard/advisor/validator.h"

#include <string_view>

#include "docguard/advisor/bson_types.h"
#include "docguard/advisor/text_format.h"

namespace docguard::advisor {
namespace {

constexpr uint32_t kMaxSchemaDepth = 8;

std::string type_json(uint32_t mask) {
  std::vector<std::string> names;
  for (int bit = 0; bit < 32; ++bit) {
    if ((mask & (1u << bit)) && *bson_type_name(bit)) names.emplace_back(bson_type_name(bit));
  }
  if (names.size() == 1) return "\"" + names[0] + "\"";
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", \"" : "\"") + names[i] + "\"";
  return out + "]";
}

uint64_t max_items_for(uint64_t observed, const AdvisorSettings& s) {
  return observed <= s.array_length_warn ? s.array_length_warn : s.array_length_block;
}

// Properties and required list of the object at `prefix` ("" for the document itself), whose
// occurrences number `parent_count`.
std::string object_schema(const CollectionProfile& p, const AdvisorSettings& s,
                          const std::string& prefix, uint32_t depth, uint64_t parent_count,
                          const std::string& indent) {
  std::string properties, required;
  for (const FieldStats& field : p.fields()) {
    if (field.depth != depth || field.inside_array || field.types == 0) continue;
    if (!prefix.empty() && field.path.compare(0, prefix.size() + 1, prefix + ".") != 0) continue;
    const std::string name = prefix.empty() ? field.path : field.path.substr(prefix.size() + 1);
    std::string schema = "{\"bsonType\": " + type_json(field.types);
    // Deeper levels stay unconstrained: a schema as deep as a 40-level tree helps nobody.
    if (field.types == kDocumentBit && depth < kMaxSchemaDepth) {
      const std::string inner =
          object_schema(p, s, field.path, depth + 1, field.occurrences, indent + "  ");
      if (!inner.empty()) schema += ", " + inner;
    }
    if (field.array >= 0) {
      const ArrayStats& array = p.arrays()[field.array];
      schema += ", \"maxItems\": " + std::to_string(max_items_for(array.lengths.max(), s));
      if (array.element_types)
        schema += ", \"items\": {\"bsonType\": " + type_json(array.element_types) + "}";
    }
    schema += "}";
    properties += (properties.empty() ? "" : ",") + std::string("\n") + indent + "  \"" +
                  json_escape(name) + "\": " + schema;
    if (field.documents == parent_count && field.occurrences == parent_count) {
      required += (required.empty() ? "\"" : ", \"") + json_escape(name) + "\"";
    }
  }
  if (properties.empty()) return "";
  std::string out;
  if (!required.empty()) out += "\"required\": [" + required + "], ";
  out += "\"properties\": {" + properties + "\n" + indent + "}";
  return out;
}

}  // namespace

std::string build_json_schema(const CollectionProfile& profile, const AdvisorSettings& settings) {
  const std::string body = object_schema(profile, settings, "", 1, profile.documents(), "    ");
  return "{\"bsonType\": \"object\"" + (body.empty() ? std::string() : ", " + body) + "}";
}

std::string build_collmod_command(const CollectionProfile& profile,
                                  const AdvisorSettings& settings) {
  return "{\n  \"collMod\": \"" + json_escape(profile.collection()) +
         "\",\n  \"validator\": {\"$jsonSchema\": " + build_json_schema(profile, settings) +
         "},\n  \"validationLevel\": \"moderate\",\n  \"validationAction\": \"error\"\n}\n";
}

}  // namespace docguard::advisor
