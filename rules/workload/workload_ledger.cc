#include "docguard/rules/workload_ledger.h"

#include <algorithm>
#include <unordered_map>

namespace docguard::rules {

namespace {
std::atomic<uint64_t> next_ledger_id{1};
}  // namespace

constinit thread_local WorkloadLedger::BindingCache WorkloadLedger::t_binding_cache;

// The table this thread uses, for one ledger at a time. A thread that ends frees its table for
// the next thread to adopt, so the tables never outnumber the threads alive at once. It keeps
// the ledger's thread cache (t_binding_cache) in step with itself.
struct LedgerBinding {
  uint64_t ledger = 0;
  std::shared_ptr<WorkloadTable> table;
  LedgerBinding() = default;
  LedgerBinding(const LedgerBinding&) = delete;
  LedgerBinding& operator=(const LedgerBinding&) = delete;
  ~LedgerBinding() { release(); }
  void release() {
    WorkloadLedger::t_binding_cache = {};
    if (table) table->in_use.store(false, std::memory_order_release);
    table.reset();
    ledger = 0;
  }
  void cache() { WorkloadLedger::t_binding_cache = {ledger, table.get()}; }
};

WorkloadLedger::WorkloadLedger(size_t max_shapes)
    : max_shapes_(max_shapes), id_(next_ledger_id.fetch_add(1)) {}

WorkloadLedger::~WorkloadLedger() = default;

void WorkloadLedger::set_max_shapes(size_t max_shapes) {
  max_shapes_.store(max_shapes, std::memory_order_relaxed);
}

WorkloadLedger::Local WorkloadLedger::local_slow() {
  thread_local LedgerBinding binding;
  if (binding.ledger != id_) {
    binding.release();
    std::lock_guard lock(tables_mutex_);
    for (const auto& table : tables_) {
      bool free = false;
      if (table->in_use.compare_exchange_strong(free, true)) {
        binding.table = table;
        break;
      }
    }
    if (!binding.table) {
      binding.table =
          tables_.emplace_back(std::make_shared<WorkloadTable>(std::max<size_t>(max_shapes(), 1)));
    }
    binding.ledger = id_;
  }
  binding.cache();
  return Local(*binding.table);
}

void WorkloadLedger::record(const WorkloadMarks& marks, const WorkloadReply& reply) {
  if (marks.empty() || marks.table == nullptr) return;
  Local table(*marks.table);
  WorkloadSketch& sketch = table.sketch();
  uint64_t accounted = 0;
  for (const WorkloadMark& mark : marks.marks) {
    // The command's time and documents shared by its operations.
    const uint64_t micros = marks.marks.size() == 1 && mark.ops == marks.ops
                                ? reply.micros
                                : reply.micros * mark.ops / marks.ops;
    accounted += micros;
    SketchEntry* entry = mark.entry;
    if (entry->key != mark.key) {
      // Replaced by a new shape since the request: its time is overflow's.
      sketch.overflow_time(micros);
      continue;
    }
    ShapeStats& s = entry->stats;
    s.micros += micros;
    s.replies += mark.ops;
    s.documents +=
        marks.marks.size() == 1 ? reply.documents : reply.documents * mark.ops / marks.ops;
    // A failed reply is one error, the first shape's: not one for each shape of the command.
    s.errors += reply.failed && &mark == &marks.marks.front() ? 1 : 0;
    s.latency.add(mark.ops == 1 ? micros : micros / mark.ops);
    if (mark.app < s.apps.size()) s.apps[mark.app].micros += micros;
    WorkloadSketch::charge(*entry, 0, micros);
  }
  // The operations past kMaxMarks.
  if (reply.micros > accounted) sketch.overflow_time(reply.micros - accounted);
}

WorkloadSnapshot WorkloadLedger::snapshot() const {
  std::vector<std::shared_ptr<WorkloadTable>> tables;
  {
    std::lock_guard lock(tables_mutex_);
    tables = tables_;
  }
  WorkloadSnapshot out;
  out.max_shapes = max_shapes();
  std::unordered_map<uint64_t, size_t> at;
  for (const auto& table : tables) {
    table->held.lock();
    const WorkloadSketch& sketch = table->sketch;
    out.overflow.count += sketch.overflow().count;
    out.overflow.micros += sketch.overflow().micros;
    for (const SketchEntry& e : sketch.entries()) {
      auto [it, added] = at.try_emplace(e.key, out.shapes.size());
      if (added) {
        out.shapes.push_back(WorkloadShape{e.info, e.stats, -1, {}});
      } else {
        out.shapes[it->second].stats.merge(e.stats);
      }
    }
    table->held.unlock();
  }
  std::sort(out.shapes.begin(), out.shapes.end(),
            [](const WorkloadShape& a, const WorkloadShape& b) {
              if (a.stats.micros != b.stats.micros) return a.stats.micros > b.stats.micros;
              return a.stats.count > b.stats.count;
            });
  if (out.shapes.size() > out.max_shapes) {
    for (size_t i = out.max_shapes; i < out.shapes.size(); ++i) {
      out.overflow.count += out.shapes[i].stats.count;
      out.overflow.micros += out.shapes[i].stats.micros;
    }
    out.shapes.resize(out.max_shapes);
  }
  return out;
}

}  // namespace docguard::rules
