// The introspector's state for /status: what the last pass did and when the next one runs.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "docguard/base/json_writer.h"
#include "docguard/introspection/introspection_lease.h"
#include "docguard/introspection/introspector.h"

namespace docguard::introspection {

std::string Introspector::status_json() const {
  std::lock_guard lock(mutex_);
  const double next =
      std::chrono::duration<double>(next_pass_ - std::chrono::steady_clock::now()).count();
  // Times to the millisecond (the next pass to a tenth of a second): what a reader needs.
  const auto rounded = [](double seconds, double per_second) {
    return std::round(seconds * per_second) / per_second;
  };
  json::Writer w;
  w.begin_object().member("enabled", true).member("uri", target_.redacted_uri);
  w.member("passes", passes_).member("commands", commands_);
  w.member("last_started", rounded(last_started_, 1000));
  w.member("last_seconds", rounded(last_seconds_, 1000));
  w.member("next_pass_in_seconds", rounded(std::max(0.0, next), 10));
  w.member("last_result", kPassResultNames.name(last_result_)).member("last_error", last_error_);
  w.member("lease_database", settings_.lease_database);
  w.member("lease_holder", lease_ ? lease_->holder() : std::string());
  w.member("lease_held", lease_held_).end_object();
  return w.take();
}

}  // namespace docguard::introspection
