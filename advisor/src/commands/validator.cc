#include "docguard/advisor/validator.h"

#include <string_view>

#include "docguard/advisor/bson_types.h"
#include "docguard/advisor/text_format.h"
#include "docguard/base/json_writer.h"

namespace docguard::advisor {
namespace {

constexpr uint32_t kMaxSchemaDepth = 8;

// One type's name, or the list of them.
void write_types(json::Writer& w, uint32_t mask) {
  std::vector<const char*> names;
  for (int bit = 0; bit < 32; ++bit) {
    if ((mask & (1u << bit)) && *bson_type_name(bit)) names.push_back(bson_type_name(bit));
  }
  if (names.size() == 1) {
    w.value(names[0]);
    return;
  }
  w.begin_array();
  for (const char* name : names) w.value(name);
  w.end_array();
}

uint64_t max_items_for(uint64_t observed, const AdvisorSettings& s) {
  return observed <= s.array_length_warn ? s.array_length_warn : s.array_length_block;
}

struct ObjectLevel {
  std::string prefix;  // "" for the document itself
  uint32_t depth;
  uint64_t parent_count;  // how many times the object occurs
};

// The fields directly under the object at `level`: the document's own for prefix "".
std::vector<const FieldStats*> fields_of(const CollectionProfile& p, const ObjectLevel& level) {
  std::vector<const FieldStats*> out;
  for (const FieldStats& field : p.fields()) {
    if (field.depth != level.depth || field.inside_array || field.types == 0) continue;
    if (!level.prefix.empty() &&
        field.path.compare(0, level.prefix.size() + 1, level.prefix + ".") != 0) {
      continue;
    }
    out.push_back(&field);
  }
  return out;
}

std::string name_in(const ObjectLevel& level, const FieldStats& field) {
  return level.prefix.empty() ? field.path : field.path.substr(level.prefix.size() + 1);
}

// The `required` and `properties` members of the object at `level` (none when no field is known).
void write_object_members(json::Writer& w, const CollectionProfile& p, const AdvisorSettings& s,
                          const ObjectLevel& level) {
  const std::vector<const FieldStats*> fields = fields_of(p, level);
  if (fields.empty()) return;
  bool any_required = false;
  for (const FieldStats* field : fields) {
    if (field->documents != level.parent_count || field->occurrences != level.parent_count) {
      continue;
    }
    if (!any_required) w.key("required").begin_array();
    any_required = true;
    w.value(name_in(level, *field));
  }
  if (any_required) w.end_array();
  w.key("properties").begin_object();
  for (const FieldStats* field : fields) {
    w.key(name_in(level, *field)).begin_object().key("bsonType");
    write_types(w, field->types);
    // Deeper levels stay unconstrained: a schema as deep as a 40-level tree helps nobody.
    if (field->types == kDocumentBit && level.depth < kMaxSchemaDepth) {
      write_object_members(w, p, s, {field->path, level.depth + 1, field->occurrences});
    }
    if (field->array >= 0) {
      const ArrayStats& array = p.arrays()[field->array];
      w.member("maxItems", max_items_for(array.lengths.max(), s));
      if (array.element_types) {
        w.key("items").begin_object().key("bsonType");
        write_types(w, array.element_types);
        w.end_object();
      }
    }
    w.end_object();
  }
  w.end_object();
}

void write_json_schema(json::Writer& w, const CollectionProfile& profile,
                       const AdvisorSettings& settings) {
  w.begin_object().member("bsonType", "object");
  write_object_members(w, profile, settings, {"", 1, profile.documents()});
  w.end_object();
}

}  // namespace

std::string build_json_schema(const CollectionProfile& profile, const AdvisorSettings& settings) {
  json::Writer w(json::Writer::Layout::kIndented);
  write_json_schema(w, profile, settings);
  return w.take();
}

std::string build_collmod_command(const CollectionProfile& profile,
                                  const AdvisorSettings& settings) {
  json::Writer w(json::Writer::Layout::kIndented);
  w.begin_object().member("collMod", profile.collection()).key("validator").begin_object();
  w.key("$jsonSchema");
  write_json_schema(w, profile, settings);
  w.end_object()
      .member("validationLevel", "moderate")
      .member("validationAction", "error")
      .end_object();
  return w.take() + "\n";
}

}  // namespace docguard::advisor
