// Per-collection statistics with fixed memory: distributions as log-linear histograms, the
// $lookup ratio as a ring of time slots, and bounded name sets with an "_other" bucket.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "docguard/base/enum_names.h"
#include "docguard/base/hash.h"
#include "docguard/base/log_histogram.h"
#include "docguard/base/spin_lock.h"
#include "docguard/codec/bson_view.h"
#include "docguard/rules/engine_sinks.h"
#include "docguard/rules/rule_kinds.h"
#include "docguard/rules/rule_set.h"

namespace docguard::rules {

inline constexpr std::string_view kOverflowLabel = "_other";

// Counts of non-negative values in buckets exact below 8 and four per power of two above, so a
// quantile is off by at most 25%, up to 2^41 (base/log_histogram.h).
using Histogram = base::LogHistogram<2, 41>;

// Reads and reads with a join over a sliding window, in kSlots slots of window/kSlots each.
// Every read of a namespace counts here, from every io thread: the slots are atomic words, so
// counting takes no lock (a read holds no lock of its namespace unless it joins).
class LookupWindow {
 public:
  static constexpr size_t kSlots = 60;
  using Clock = std::chrono::steady_clock;

  // Every read sets the window of the rules in force: inline, as it is mostly the same one.
  void set_window(std::chrono::seconds window) {
    if (window.count() != window_seconds_.load(std::memory_order_relaxed)) reset(window);
  }
  std::chrono::seconds window() const {
    return std::chrono::seconds(window_seconds_.load(std::memory_order_relaxed));
  }
  void add(Clock::time_point now, bool with_lookup);
  struct Totals {
    uint64_t reads = 0;
    uint64_t lookups = 0;
    double ratio() const { return reads == 0 ? 0.0 : static_cast<double>(lookups) / reads; }
  };
  Totals totals(Clock::time_point now) const;

 private:
  // A slot's count and the slot period (epoch) it counts for, in one word: the period's low
  // kEpochBits bits above a kCountBits-bit count. A word of another period counts nothing
  // (all zero: a cleared slot). Periods are compared modulo 2^kEpochBits, enough to tell the
  // last kSlots apart.
  static constexpr int kEpochBits = 24;
  static constexpr int kCountBits = 64 - kEpochBits;
  static constexpr uint64_t kCountMask = (uint64_t{1} << kCountBits) - 1;
  static constexpr uint64_t kEpochMask = (uint64_t{1} << kEpochBits) - 1;
  // A new rule set's window: rare. Counts of the old slots mean nothing in the new ones.
  void reset(std::chrono::seconds window);
  static void count(std::atomic<uint64_t>& slot, uint64_t epoch);
  static uint64_t count_in(const std::atomic<uint64_t>& slot, uint64_t epoch);
  uint64_t epoch_of(Clock::time_point now) const;

  std::atomic<int64_t> window_seconds_{kDefaultLookupWindow.count()};
  std::atomic<int64_t> slot_ms_{kDefaultLookupWindow.count() * 1000 / int64_t{kSlots}};
  std::array<std::atomic<uint64_t>, kSlots> reads_{};
  std::array<std::atomic<uint64_t>, kSlots> lookups_{};
};

// Everything known about one namespace (or the "_other" overflow namespace). Not thread-safe
// by itself: the engine holds `mutex` while touching it.
struct CollectionStats {
  explicit CollectionStats(std::string db_name, std::string coll_name);
  CollectionStats(const CollectionStats&) = delete;
  CollectionStats& operator=(const CollectionStats&) = delete;

  struct FieldStats;
  // The statistics of an array field path under its stable label (the key): the path itself
  // while fewer than max_fields paths are known, "_other" afterwards.
  std::pair<const std::string, FieldStats>& field(std::string_view path, uint32_t max_fields);
  void count_offender(std::string_view app, uint32_t max_apps);
  void count_offending_user(std::string_view user, uint32_t max_users);
  // Counts a join from this namespace; returns the bounded label for `from`.
  const std::string& count_from(std::string_view from, uint32_t max_froms);

  // Taken on every write and read of the namespace, briefly: a spin lock (base/spin_lock.h).
  base::SpinLock mutex;
  const std::string db;
  const std::string coll;
  // db and coll as the sinks get them, with an id no other CollectionStats of the process has.
  const NamespaceLabels labels;

  // Rules resolved for this namespace, rebuilt when the rule set generation changes: `limits`
  // for connections no scoped rule applies to, `scoped` by scope id for the others (at most
  // kMaxScopedLimits; more scopes are resolved for each command).
  struct ResolvedLimits {
    std::shared_ptr<const NamespaceLimits> limits;
    uint64_t generation = 0;
    std::vector<std::pair<uint32_t, std::shared_ptr<const NamespaceLimits>>> scoped;
  };
  static constexpr size_t kMaxScopedLimits = 64;
  ResolvedLimits active;     // the rules in force
  ResolvedLimits candidate;  // candidate_rules, judged in a dry run

  // Counted without `mutex`: every command of the namespace adds one, and nothing else is
  // touched then.
  std::atomic<uint64_t> commands{0};
  // Queries the guardrail could not judge: the namespace's indexes were not known.
  std::atomic<uint64_t> guardrail_unknown{0};
  Histogram document_bytes;
  Histogram sampled_document_bytes;  // from read replies
  using StringHash = base::StringHash;
  struct FieldStats {
    Histogram lengths;
    uint64_t pushes = 0;
    uint64_t pushed_elements = 0;
  };
  std::unordered_map<std::string, FieldStats, StringHash, std::equal_to<>> fields;
  // field()'s last answer, compared first: a namespace's writes meet the same path again (the
  // map's entries stay where they are, and none is ever removed).
  std::pair<const std::string, FieldStats>* last_field = nullptr;
  LookupWindow lookups;
  std::atomic<uint64_t> reads_total{0};  // counted without the lock, as `lookups` is
  uint64_t lookup_reads_total = 0;
  std::unordered_map<std::string, uint64_t, StringHash, std::equal_to<>> lookup_from;
  std::array<std::array<uint64_t, 3>, static_cast<size_t>(RuleKind::kCount)> violations{};
  std::unordered_map<std::string, uint64_t, StringHash, std::equal_to<>> offenders;  // by app
  std::unordered_map<std::string, uint64_t, StringHash, std::equal_to<>> offending_users;

  // Warn-log rate limiting per rule: at most one line per kLogInterval, with a skipped count.
  static constexpr std::chrono::seconds kLogInterval{10};
  std::array<std::chrono::steady_clock::time_point, static_cast<size_t>(RuleKind::kCount)>
      last_log{};
  std::array<uint64_t, static_cast<size_t>(RuleKind::kCount)> suppressed{};
};

}  // namespace docguard::rules
