// Reading a failure's details back: the property names the census counts.
#include <bson/bson.h>

#include <string>
#include <string_view>
#include <vector>

#include "docguard/rules/json_schema.h"

namespace docguard::rules {

std::vector<std::string> failing_properties(const codec::BsonView& details) {
  std::vector<std::string> out;
  auto add = [&](std::string_view name) {
    for (const auto& n : out) {
      if (n == name) return;
    }
    out.emplace_back(name);
  };
  bson_iter_t it, rules, rule, field, list, item, name;
  if (details.empty() || !bson_iter_init_from_data(&it, details.data, details.size) ||
      !bson_iter_find(&it, "schemaRulesNotSatisfied") || !bson_iter_recurse(&it, &rules)) {
    return out;
  }
  while (bson_iter_next(&rules)) {
    if (!BSON_ITER_HOLDS_DOCUMENT(&rules) || !bson_iter_recurse(&rules, &rule)) continue;
    while (bson_iter_next(&rule)) {
      const std::string_view key = bson_iter_key(&rule);
      if (!BSON_ITER_HOLDS_ARRAY(&rule)) {
        if (key == "failingProperty" && BSON_ITER_HOLDS_UTF8(&rule))
          add(bson_iter_utf8(&rule, nullptr));
        continue;
      }
      if (!bson_iter_recurse(&rule, &list)) continue;
      const bool names = key == "missingProperties" || key == "additionalProperties";
      const bool entries =
          key == "propertiesNotSatisfied" || key == "details" || key == "failingDependencies";
      while (bson_iter_next(&list)) {
        if (names && BSON_ITER_HOLDS_UTF8(&list)) add(bson_iter_utf8(&list, nullptr));
        if (!entries || !BSON_ITER_HOLDS_DOCUMENT(&list)) continue;
        if (!bson_iter_recurse(&list, &item)) continue;
        field = item;
        if (bson_iter_find(&field, "propertyName") && BSON_ITER_HOLDS_UTF8(&field)) {
          add(bson_iter_utf8(&field, nullptr));
        }
        name = item;
        if (bson_iter_find(&name, "conditionalProperty") && BSON_ITER_HOLDS_UTF8(&name)) {
          add(bson_iter_utf8(&name, nullptr));
        }
      }
    }
  }
  return out;
}

}  // namespace docguard::rules
