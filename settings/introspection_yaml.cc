// `introspection:` in the settings file: how docguard reads the cluster it guards.
#include <cmath>

#include "section_readers.h"

namespace docguard::settings {

void apply_introspection_yaml(const ConfigReader& r, const YAML::Node& n,
                              introspection::IntrospectionSettings& s) {
  r.check_keys(n,
               {"enabled", "uri", "credentials_file", "sample_size", "max_commands_per_second",
                "interval", "max_time", "jitter", "lease_database"},
               "introspection");
  if (auto v = n["enabled"]) s.enabled = r.boolean(v, "introspection.enabled");
  if (auto v = n["uri"]) s.uri = r.scalar(v, "introspection.uri");
  if (auto v = n["credentials_file"]) {
    s.credentials_file = r.scalar(v, "introspection.credentials_file");
  }
  if (auto v = n["sample_size"]) {
    s.sample_size = static_cast<uint64_t>(r.count(v, "introspection.sample_size", 1e7));
    if (s.sample_size == 0) r.fail(v, "introspection.sample_size", "must be at least 1");
  }
  if (auto v = n["max_commands_per_second"]) {
    try {
      s.max_commands_per_second = std::stod(r.scalar(v, "introspection.max_commands_per_second"));
    } catch (const std::exception&) {
      r.fail(v, "introspection.max_commands_per_second", "expected a number");
    }
    if (!(s.max_commands_per_second > 0) || !std::isfinite(s.max_commands_per_second)) {
      r.fail(v, "introspection.max_commands_per_second", "must be a positive number");
    }
  }
  if (auto v = n["interval"]) {
    s.interval = r.duration(v, "introspection.interval");
    if (s.interval.count() <= 0) r.fail(v, "introspection.interval", "must be positive");
  }
  if (auto v = n["max_time"]) {
    s.max_time = r.duration(v, "introspection.max_time");
    if (s.max_time.count() <= 0 || s.max_time.count() > INT32_MAX) {
      r.fail(v, "introspection.max_time", "must be positive and fit maxTimeMS");
    }
  }
  if (auto v = n["jitter"]) s.jitter = r.ratio(v, "introspection.jitter");
  if (auto v = n["lease_database"]) {
    s.lease_database = r.scalar(v, "introspection.lease_database");
  }
}

}  // namespace docguard::settings
