// The workload ledger's table: per query shape, what the traffic of that shape cost, bounded to
// the heaviest shapes by a space-saving sketch (Metwally et al.) weighted by upstream time.
//
// While fewer shapes than the capacity have been seen, every count is exact. Past it, a new shape
// replaces the lightest entry: the replaced entry's count and time move to the overflow (so
// entries + overflow always hold every operation), and the newcomer inherits the replaced
// entry's weight as its rank (not as its count). A shape heavier than the lightest entry's weight
// therefore stays, whatever else arrives: the heavy hitters are kept, the long tail is counted
// as overflow. The counts of an entry are exact since it was admitted; `inherited` bounds what it
// may have missed before.
//
// Single-threaded: the ledger (workload_ledger.h) gives each thread a table of its own.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/base/log_histogram.h"
#include "docguard/rules/query_shape.h"

namespace docguard::rules {

// What the rules made of one operation.
enum class WorkloadVerdict : uint8_t { kPassed, kWarned, kBlocked, kCandidate };
inline constexpr size_t kWorkloadVerdicts = 4;
std::string_view workload_verdict_name(WorkloadVerdict verdict);

// What a shape is, built once when the shape is admitted (never per operation).
struct ShapeInfo {
  std::string db, collection;  // the namespace's names (at most 256 bytes each)
  std::string command;         // find, aggregate, count, distinct, findAndModify, update, delete
  std::string shape;           // the guardrail's shape text (query_guardrail.h), at most 1 KiB
  QueryShape fields;           // equality / sort / range fields: which index would serve it
  bool exempt = false;         // admin, local, config, system.*: never an unindexed query
  // The first query of the shape as the guardrail judges it (filter, sort, pipeline, hint,
  // collation, tailable), one BSON document of at most 1 KiB; empty when larger
  // (plan_too_large: the shape's `indexed` is then not known).
  std::string plan;
  bool plan_too_large = false;
};

// Upstream times in microseconds: exact below 8, then 4 buckets per power of two (values within
// ~19% share a bucket) (base/log_histogram.h). An add is one increment, on every operation's
// path: no totals kept, and buckets over the whole range, so no clamp either (2 KiB).
using LatencyHistogram = base::LogHistogram<2, 64, /*kKeepsTotals=*/false>;

struct AppStats {
  std::string app;  // the client's appName ("" for none; "_other" past kMaxAppsPerShape)
  uint64_t count = 0;
  uint64_t micros = 0;
};
// Apps with their own line per shape; the rest share "_other".
inline constexpr size_t kMaxAppsPerShape = 8;

struct ShapeStats {
  uint64_t count = 0;      // operations (each statement of a batch is one)
  uint64_t micros = 0;     // upstream time: request forwarded to reply arrived
  uint64_t replies = 0;    // operations whose reply was timed (blocked ones get none)
  uint64_t documents = 0;  // what the replies say: cursor.firstBatch length, else n
  uint64_t errors = 0;     // replies with ok: 0 or writeErrors
  // Operations the query guardrail found no index for (require_index): when the shape's first
  // query was served, its queries differ in what decides the plan, and `indexed` is not known.
  uint64_t unserved = 0;
  std::array<uint64_t, kWorkloadVerdicts> verdicts{};
  LatencyHistogram latency;
  std::vector<AppStats> apps;  // at most kMaxAppsPerShape + 1 ("_other")

  // The app's line in `apps`, added when new (past kMaxAppsPerShape: the "_other" line).
  uint32_t app_line(std::string_view name) {
    // Most shapes are sent by one app: its line is the first, found without a call.
    return !apps.empty() && apps.front().app == name ? 0 : find_or_add_app_line(name);
  }
  AppStats& app(std::string_view name) { return apps[app_line(name)]; }
  void merge(const ShapeStats& other);

 private:
  uint32_t find_or_add_app_line(std::string_view name);
};

struct SketchEntry {
  uint64_t key = 0;        // the shape's hash (workload_shape.h)
  uint64_t weight = 0;     // rank: micros + count, plus `inherited`
  uint64_t inherited = 0;  // weight taken over from the entry this one replaced
  std::shared_ptr<const ShapeInfo> info;
  ShapeStats stats;
  // Whether an index serves the shape, as last judged (IndexCatalog version `judged_at`):
  // 1 served, 0 not, -1 not known.
  uint64_t judged_at = 0;
  int8_t indexed = -1;
};

struct WorkloadOverflow {
  uint64_t count = 0;
  uint64_t micros = 0;
};

class WorkloadSketch {
 public:
  explicit WorkloadSketch(size_t capacity);

  size_t capacity() const { return capacity_; }
  size_t size() const { return entries_.size(); }
  const std::vector<SketchEntry>& entries() const { return entries_; }
  const WorkloadOverflow& overflow() const { return overflow_; }

  SketchEntry* find(uint64_t key) {
    for (size_t slot = key & mask_;; slot = (slot + 1) & mask_) {
      const uint32_t at = slots_[slot];
      if (at == 0) return nullptr;
      if (entries_[at - 1].key == key) return &entries_[at - 1];
    }
  }
  // Admits a shape not in the table; when full, the lightest entry makes room (see above).
  SketchEntry& admit(uint64_t key, std::shared_ptr<const ShapeInfo> info);
  // Operations and time for an entry (its stats are the caller's to fill).
  static void charge(SketchEntry& entry, uint64_t ops, uint64_t micros) {
    entry.weight += ops + micros;
  }
  // Time of an operation whose entry was replaced before its reply came.
  void overflow_time(uint64_t micros) { overflow_.micros += micros; }

 private:
  void insert_slot(uint64_t key, uint32_t at);
  void erase_slot(uint64_t key);

  size_t capacity_;
  size_t mask_;
  std::vector<SketchEntry> entries_;
  std::vector<uint32_t> slots_;  // open addressing: entry index + 1, 0 empty
  WorkloadOverflow overflow_;
};

}  // namespace docguard::rules
