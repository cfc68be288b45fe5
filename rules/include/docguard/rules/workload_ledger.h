// The workload ledger: per query shape and per app, how many operations, how much upstream
// time (total and p99), documents returned, errors and the rules' verdicts, for every read
// (find, aggregate, count, distinct, findAndModify) and every update / delete statement.
//
// On the message path (Engine::inspect) each operation's shape is identified by a hash of its
// parts (workload_shape_hash: namespace, command, filter / sort / projection keys with their
// operators, never values); the shape's text is built only when a new shape is admitted. The
// conversation times the request from forwarding to its reply and records the time against the
// same hashes (record()).
//
// Bounded: each thread has a table of its own of at most max_shapes entries (workload_sketch.h:
// the heaviest shapes by upstream time are kept, the rest counted as overflow); snapshot()
// merges the tables and keeps the max_shapes heaviest. Memory: threads x max_shapes entries of
// about 2.5 KiB (most of it the latency histogram), whatever the clients send. No lock is shared on
// the message path: a thread locks only its own table, which a reader (snapshot) takes briefly.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "docguard/base/inline_vector.h"
#include "docguard/base/spin_lock.h"
#include "docguard/rules/query_guardrail.h"
#include "docguard/rules/verdict.h"
#include "docguard/rules/workload_sketch.h"

namespace docguard::rules {

inline constexpr size_t kDefaultWorkloadShapes = 500;

// What a shape's hash reads of a query (QueryParts' filter, sort, projection and pipeline);
// `filter_scalar_key`, single_scalar_equality of the filter when the caller knows it already
// (CommandView::query_scalar_key).
struct HashedQuery {
  codec::BsonView filter;
  codec::BsonView sort;
  codec::BsonView projection;
  codec::BsonView pipeline;
  std::optional<std::string_view> filter_scalar_key;
};

// The hash of the shape text append_shape_text(parts) would write, without writing it; `seed`
// stands for the namespace and command.
uint64_t workload_shape_hash(const HashedQuery& query, uint64_t seed);
inline uint64_t workload_shape_hash(const QueryParts& parts, uint64_t seed) {
  return workload_shape_hash(
      HashedQuery{parts.filter, parts.sort, parts.projection, parts.pipeline, std::nullopt}, seed);
}
// One step of the shape hash: `v` mixed into `h`.
inline uint64_t workload_mix(uint64_t h, uint64_t v) {
  h = (h ^ v) * 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}
// The seed of a command's shape hashes: its namespace and command. Inline: once per command.
inline uint64_t workload_seed(uint64_t namespace_id, uint32_t command) {
  return workload_mix(workload_mix(0x243F6A8885A308D3ull, namespace_id), command);
}

// What one reply says, for the ledger.
struct WorkloadReply {
  uint64_t micros = 0;     // request forwarded to reply arrived
  uint64_t documents = 0;  // cursor.firstBatch length, else n
  bool failed = false;     // ok: 0 or writeErrors
};

struct WorkloadShape {
  std::shared_ptr<const ShapeInfo> info;
  ShapeStats stats;
  // Engine::workload_report: whether an index serves the shape (1), none of the known ones
  // does (0: `index` is the one that would, in ESR order), or it is not known (-1).
  int8_t indexed = -1;
  IndexKeys index;
};

struct WorkloadSnapshot {
  std::vector<WorkloadShape> shapes;  // by stats.micros, largest first
  WorkloadOverflow overflow;          // operations of shapes not among them, and their time
  size_t max_shapes = 0;
};

// One thread's table. Its lock is taken by its thread on every operation and by a reader now
// and then: a spin lock.
struct WorkloadTable {
  explicit WorkloadTable(size_t capacity) : sketch(capacity) {}
  base::SpinLock held;
  std::atomic<bool> in_use{true};  // bound to a live thread
  WorkloadSketch sketch;
};

class WorkloadLedger {
 public:
  explicit WorkloadLedger(size_t max_shapes = kDefaultWorkloadShapes);
  ~WorkloadLedger();
  WorkloadLedger(const WorkloadLedger&) = delete;
  WorkloadLedger& operator=(const WorkloadLedger&) = delete;

  // workload.max_shapes (0: the ledger is off); set before traffic: tables made before keep
  // their size.
  void set_max_shapes(size_t max_shapes);
  size_t max_shapes() const { return max_shapes_.load(std::memory_order_relaxed); }

  // This thread's table, locked while the handle lives.
  // Inline, as the thread's binding below: every read and write statement takes one.
  class Local {
   public:
    explicit Local(WorkloadTable& table) : table_(table) { table_.held.lock(); }
    ~Local() { table_.held.unlock(); }
    Local(const Local&) = delete;
    Local& operator=(const Local&) = delete;
    WorkloadSketch& sketch() { return table_.sketch; }
    WorkloadTable* table() { return &table_; }

   private:
    WorkloadTable& table_;
  };
  Local local() {
    if (t_binding_cache.ledger == id_) return Local(*t_binding_cache.table);
    return local_slow();
  }

  // A command's reply: its time (split evenly over its operations), documents and error
  // against the shapes its request was identified with (in the table that identified them,
  // whichever thread the reply comes on). The app is the one the marks name.
  static void record(const WorkloadMarks& marks, const WorkloadReply& reply);

  // Every thread's table merged: the max_shapes heaviest shapes, the rest as overflow.
  WorkloadSnapshot snapshot() const;

 private:
  Local local_slow();
  // The binding as the hot path reads it: trivially destructible and constinit, so reading it
  // is a plain thread-local load, with no call to construct it first.
  struct BindingCache {
    uint64_t ledger = 0;
    WorkloadTable* table = nullptr;
  };
  static constinit thread_local BindingCache t_binding_cache;
  friend struct LedgerBinding;

  std::atomic<size_t> max_shapes_;
  const uint64_t id_;  // tells this ledger's table in a thread's binding from another's
  mutable std::mutex tables_mutex_;
  std::vector<std::shared_ptr<WorkloadTable>> tables_;
};

}  // namespace docguard::rules
