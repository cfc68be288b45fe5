// The census of each configured $jsonSchema validator before it is enforced: of the stored
// documents docguard sampled (introspection), how many fail and which properties fail most; and
// per client app, how many writes failed it (or would have, for a candidate) over the last hour.
// Bounded: validators per namespace and rule up to max_entries, properties and apps per
// validator up to their bounds ("_other" past them).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "docguard/base/json_writer.h"

namespace docguard::rules {

struct ValidatorCensus {
  std::string db, collection;
  std::string rule;  // the rule's id, else its key (rule_key)
  bool candidate = false;
  uint64_t stored_sampled = 0, stored_failing = 0;
  std::vector<std::pair<std::string, uint64_t>> failing_properties;     // most first
  std::vector<std::pair<std::string, uint64_t>> writes_failing_by_app;  // last hour, most first
};

class SchemaCensus {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kMaxEntries = 256;
  static constexpr size_t kMaxProperties = 32;
  static constexpr size_t kMaxApps = 64;

  // A sampled stored document judged by the validator.
  void stored(std::string_view db, std::string_view coll, std::string_view rule, bool candidate,
              bool failing, const std::vector<std::string>& properties);
  // A write that failed the validator (a candidate's: would have).
  void write_failed(std::string_view db, std::string_view coll, std::string_view rule,
                    bool candidate, std::string_view app, Clock::time_point now);
  std::vector<ValidatorCensus> snapshot(Clock::time_point now) const;

 private:
  // Writes per app in one-minute slots over the last hour.
  struct Slot {
    int64_t minute = -1;
    uint64_t count = 0;
  };
  using Hour = std::array<Slot, 60>;
  struct Entry {
    uint64_t stored_sampled = 0, stored_failing = 0;
    std::map<std::string, uint64_t, std::less<>> properties;
    std::map<std::string, Hour, std::less<>> apps;
  };
  using Key = std::tuple<std::string, std::string, std::string, bool>;
  Entry* entry(std::string_view db, std::string_view coll, std::string_view rule, bool candidate);

  mutable std::mutex mutex_;
  std::map<Key, Entry> entries_;
};

// The census as a JSON array of {db, collection, rule, candidate, stored_sampled,
// stored_failing, failing_properties: {name: n}, writes_failing_by_app: {app: n}}.
void write_validator_census(json::Writer& w, const std::vector<ValidatorCensus>& census);

}  // namespace docguard::rules
