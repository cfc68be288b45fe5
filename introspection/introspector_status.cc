// The introspector's state for /status: what the last pass did and when the next one runs.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "docguard/base/json_string.h"
#include "docguard/introspection/introspection_lease.h"
#include "docguard/introspection/introspector.h"

namespace docguard::introspection {

std::string Introspector::status_json() const {
  std::lock_guard lock(mutex_);
  const double next =
      std::chrono::duration<double>(next_pass_ - std::chrono::steady_clock::now()).count();
  char numbers[160];
  std::snprintf(numbers, sizeof numbers,
                "\"passes\":%llu,\"commands\":%llu,\"last_started\":%.3f,\"last_seconds\":%.3f,"
                "\"next_pass_in_seconds\":%.1f",
                static_cast<unsigned long long>(passes_),
                static_cast<unsigned long long>(commands_), last_started_, last_seconds_,
                std::max(0.0, next));
  return std::string("{\"enabled\":true,\"uri\":") + json::quoted(target_.redacted_uri) + "," +
         numbers + ",\"last_result\":" + json::quoted(kPassResultNames.name(last_result_)) +
         ",\"last_error\":" + json::quoted(last_error_) +
         ",\"lease_database\":" + json::quoted(settings_.lease_database) +
         ",\"lease_holder\":" + json::quoted(lease_ ? lease_->holder() : "") +
         ",\"lease_held\":" + (lease_held_ ? "true" : "false") + "}";
}

}  // namespace docguard::introspection
