// The query guardrail's keys of a rule (rules/include/docguard/rules/guardrail_rule.h says what
// they mean).
#include "guardrail_yaml.h"

#include "config_reader.h"
#include "docguard/rules/guardrail_rule.h"

namespace docguard::settings {

using rules::AllowedShape;
using rules::end_of_day_unix_ms;

bool read_guardrail_key(const ConfigReader& reader, std::string_view name, const YAML::Node& value,
                        const std::string& key, rules::GuardrailRule& out) {
  if (name == "require_index") {
    out.require_index = reader.boolean(value, key);
  } else if (name == "max_time_ms") {
    const double ms = reader.count(value, key, static_cast<double>(rules::kMaxTimeMsLimit));
    if (ms < 1) reader.fail(value, key, "must be at least 1 (leave the key out for none)");
    out.max_time_ms = static_cast<int64_t>(ms);
  } else if (name == "max_time_ms_writes") {
    out.max_time_ms_writes = reader.boolean(value, key);
  } else if (name == "allow") {
    if (!value.IsSequence()) {
      reader.fail(value, key, "expected a list of {shape, owner, until} entries");
    }
    for (size_t i = 0; i < value.size(); ++i) {
      const YAML::Node& entry = value[i];
      const std::string entry_key = key + "[" + std::to_string(i) + "]";
      reader.check_keys(entry, {"shape", "owner", "until"}, entry_key);
      AllowedShape allowed;
      allowed.line = entry.Mark().is_null() ? 0 : entry.Mark().line + 1;
      for (const char* required : {"shape", "owner", "until"}) {
        if (!entry[required]) {
          reader.fail(entry, entry_key + "." + required,
                      "missing; an exception needs the shape it tolerates, an owner and an end "
                      "date");
        }
      }
      allowed.shape = reader.scalar(entry["shape"], entry_key + ".shape");
      allowed.owner = reader.scalar(entry["owner"], entry_key + ".owner");
      allowed.until = reader.scalar(entry["until"], entry_key + ".until");
      if (allowed.shape.empty()) reader.fail(entry["shape"], entry_key + ".shape", "is empty");
      if (allowed.owner.empty()) reader.fail(entry["owner"], entry_key + ".owner", "is empty");
      allowed.expires_unix_ms = end_of_day_unix_ms(allowed.until);
      if (allowed.expires_unix_ms < 0) {
        reader.fail(entry["until"], entry_key + ".until",
                    "expected a date written YYYY-MM-DD, got '" + allowed.until + "'");
      }
      out.allow.push_back(std::move(allowed));
    }
  } else {
    return false;
  }
  return true;
}

}  // namespace docguard::settings
