// Reading a failure's details back: the property names the census counts.
#include <bson/bson.h>

#include <string>
#include <string_view>
#include <vector>

#include "docguard/codec/bson_elements.h"
#include "docguard/schema/json_schema.h"

namespace docguard::schema {

std::vector<std::string> failing_properties(const codec::BsonView& details) {
  std::vector<std::string> out;
  auto add = [&](std::string_view name) {
    for (const auto& n : out) {
      if (n == name) return;
    }
    out.emplace_back(name);
  };
  if (!codec::well_framed(details)) return out;
  codec::BsonElements it(details);
  if (!it.find("schemaRulesNotSatisfied") || !codec::is_container(it.type)) return out;
  for (codec::BsonElements rules(it.container()); rules.next();) {
    if (!rules.holds_document()) continue;
    for (codec::BsonElements rule(rules.container()); rule.next();) {
      const std::string_view key = rule.key;
      if (!rule.holds_array()) {
        if (key == "failingProperty" && rule.holds_utf8()) add(rule.utf8());
        continue;
      }
      const bool names = key == "missingProperties" || key == "additionalProperties";
      const bool entries =
          key == "propertiesNotSatisfied" || key == "details" || key == "failingDependencies";
      for (codec::BsonElements list(rule.container()); list.next();) {
        if (names && list.holds_utf8()) add(list.utf8());
        if (!entries || !list.holds_document()) continue;
        codec::BsonElements field(list.container());
        if (field.find("propertyName") && field.holds_utf8()) add(field.utf8());
        codec::BsonElements name(list.container());
        if (name.find("conditionalProperty") && name.holds_utf8()) add(name.utf8());
      }
    }
  }
  return out;
}

}  // namespace docguard::schema
