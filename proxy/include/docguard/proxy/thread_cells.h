// Counters and histograms updated on every message, kept per thread. An update is a plain store
// into the calling thread's own cell: no lock, no atomic read-modify-write, no cache line that
// every io thread writes. fold() adds what the threads counted since the last fold to the
// exported prometheus series, at scrape time, so /metrics shows the same names, labels and
// values as if each update had gone to the series directly.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/histogram.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "docguard/codec/bson_view.h"

namespace docguard::proxy {

class ThreadCells {
 public:
  using Bounds = prometheus::Histogram::BucketBoundaries;
  // A series' cells: `slot` is their index in every thread's storage; a histogram's bounds
  // pick the bucket (its cells: one per bucket, +Inf, then the sum).
  struct Handle {
    uint32_t slot = 0;
    const Bounds* bounds = nullptr;  // null for a counter
  };

  ThreadCells();
  ~ThreadCells();
  ThreadCells(const ThreadCells&) = delete;
  ThreadCells& operator=(const ThreadCells&) = delete;

  // Registers a series (once per series: a second call returns the first handle). `bounds`
  // must be the histogram's own bucket boundaries and outlive this object.
  Handle add(prometheus::Counter& series);
  Handle add(prometheus::Histogram& series, const Bounds& bounds);

  // The calling thread's handle for the series named `key` (label values), from its own index;
  // on this thread's first use of the key, make() resolves it (and may register the series).
  template <typename Make>
  Handle find(std::string_view key, const Make& make) {
    auto& index = this_thread().index;
    if (auto it = index.find(key); it != index.end()) return it->second;
    return index.emplace(std::string(key), make()).first->second;
  }

  void increment(Handle counter, double v = 1) { bump(this_thread().cell(counter.slot), v); }
  void observe(Handle histogram, double v) {
    // The bucket prometheus::Histogram::Observe picks: the first bound >= v, else +Inf.
    const Bounds& b = *histogram.bounds;
    const auto bucket = static_cast<uint32_t>(
        std::find_if(b.begin(), b.end(), [v](double bound) { return bound >= v; }) - b.begin());
    Thread& t = this_thread();
    bump(t.cell(histogram.slot + bucket), 1);
    bump(t.cell(histogram.slot + static_cast<uint32_t>(b.size()) + 1), v);
  }

  // Adds every thread's counts since the previous fold to the exported series.
  void fold();

 private:
  using Cell = std::atomic<double>;
  static constexpr uint32_t kChunk = 512;  // cells per allocation; a series never straddles two

  struct Thread {
    std::thread::id id;
    // Written by the owning thread only; a scrape reads the cells under `mutex`, which the
    // owner takes only to add a chunk.
    std::mutex mutex;
    std::vector<std::unique_ptr<Cell[]>> chunks;
    std::unordered_map<std::string, Handle, codec::StringHash, std::equal_to<>> index;

    Cell* cell(uint32_t slot) {
      const uint32_t chunk = slot / kChunk;
      if (chunk >= chunks.size()) add_chunks(chunk);
      return &chunks[chunk][slot % kChunk];
    }
    void add_chunks(uint32_t up_to);
  };
  struct Series {
    prometheus::Counter* counter = nullptr;
    prometheus::Histogram* histogram = nullptr;
    Handle handle;
    uint32_t cells = 0;
    std::vector<double> folded;  // per cell: the total already added to the series
  };

  static void bump(Cell* c, double v) {
    c->store(c->load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
  }
  Thread& this_thread() {
    if (t_cache.owner == id_) return *t_cache.thread;
    return this_thread_slow();
  }
  Thread& this_thread_slow();
  Handle add_series(Series series);

  struct Cache {
    uint64_t owner = 0;
    Thread* thread = nullptr;
  };
  // constinit: no dynamic initialization, so no TLS wrapper call on each access.
  static constinit thread_local Cache t_cache;

  const uint64_t id_;  // tells this object's threads from another's in t_cache
  std::mutex mutex_;   // threads_, series_, by_series_, next_slot_; one fold at a time
  std::vector<std::unique_ptr<Thread>> threads_;
  std::vector<Series> series_;
  std::unordered_map<const void*, Handle> by_series_;
  uint32_t next_slot_ = 0;
};

}  // namespace docguard::proxy
