// Counters and histograms updated on every message, kept per thread. An update is a plain store
// into the calling thread's own cell: no lock, no atomic read-modify-write, no cache line that
// every io thread writes. fold() adds what the threads counted since the last fold to the
// exported prometheus series, at scrape time, so /metrics shows the same names, labels and
// values as if each update had gone to the series directly.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/histogram.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "docguard/base/hash.h"
#include "docguard/base/key_parts.h"
#include "docguard/base/short_equal.h"
#include "docguard/codec/bson_view.h"

namespace docguard::telemetry {

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

  // A labeled series is named by its family (a number below kFamilies, one per metric family),
  // a number standing for its leading label values (`prefix`: equal numbers always mean equal
  // values, as NamespaceLabels::id does for db and collection) and the rest of its label values.
  static constexpr uint8_t kFamilies = 16;
  using LabelValues = std::initializer_list<std::string_view>;

  // Label values come from clients (a command's name, a namespace) and may hold any byte: keys
  // hold them as base::append_key_part writes them.

  // The calling thread's handle for a labeled series, from its own index (no lock); on this
  // thread's first use of the label set, make() resolves it (and may register the series).
  // A thread mostly meets the same few series again (one collection's inserts and finds in
  // turn), so the family's last series, then kEarlier ones, are compared first: the prefix as
  // one number, the other values part by part; no key is built or hashed then.
  // make() returns a Resolved: the handle, and whether this thread may remember it under the
  // label set (a label set the exposition's series budget refused is counted in an overflow
  // series and not remembered, so refused label sets cost no memory here).
  struct Resolved {
    // Implicit: a make() that returns a plain Handle means "remember it".
    Resolved(Handle h, bool keep = true) : handle(h), remember(keep) {}
    Handle handle;
    bool remember;
  };
  template <typename Make>
  Handle find(uint8_t family, uint64_t prefix, LabelValues values, const Make& make) {
    Thread& t = this_thread();
    if (const LastSeries* known = t.known(family, prefix, values)) return known->handle;
    const std::string_view key = t.key_of(family, prefix, values);
    auto it = t.index.find(key);
    if (it == t.index.end()) {
      const Resolved resolved = make();
      if (!resolved.remember) return resolved.handle;
      it = t.index.emplace(std::string(key), resolved.handle).first;
    }
    // The last one becomes an earlier one, in place of the one met longest ago.
    LastSeries& last = t.last[family];
    Earlier& earlier = t.earlier[family];
    if (!last.key.empty()) {
      std::swap(earlier.series[earlier.next], last);
      earlier.next = static_cast<uint8_t>((earlier.next + 1) % kEarlier);
    }
    last.key.assign(key);
    last.prefix = prefix;
    last.handle = it->second;
    return it->second;
  }

  void increment(Handle counter, double v = 1) { bump(this_thread().cell(counter.slot), v); }
  void observe(Handle histogram, double v) { observe_in(this_thread(), histogram, v); }

  // The hot path of a labeled update: when one of the family's last series on this thread is
  // this label set, adds `v` to it (a counter) or observes `v` (a histogram) and returns true,
  // with one lookup of the thread and no call. False, nothing done, otherwise: then find() and
  // increment() or observe().
  // `histogram`: whether the family is one (its series' handles all have bounds), known where
  // the call is inlined, so a counter's call holds no histogram code (nor its registers).
  [[gnu::always_inline]] bool add_to_last(uint8_t family, uint64_t prefix, LabelValues values,
                                          double v, bool histogram) {
    Thread& t = this_thread();
    const LastSeries* last = t.known(family, prefix, values);
    if (last == nullptr) return false;
    if (!histogram) {
      bump(t.cell(last->handle.slot), v);
    } else {
      observe_in(t, last->handle, v);
    }
    return true;
  }

  // Two labeled counters that one call always adds 1 to together (a command's per-namespace
  // and per-app counts): the pair of label sets {prefix; a} and {b; a} is named by `prefix`,
  // `a` and `b`. When this thread met the pair among its last kPairs, adds 1 to both (one
  // lookup of the thread, one comparison) and returns true; false, nothing done, otherwise.
  [[gnu::always_inline]] bool increment_known_pair(uint64_t prefix, std::string_view a,
                                                   std::string_view b) {
    Thread& t = this_thread();
    for (const CounterPair& pair : t.pairs) {
      if (pair.matches(prefix, a, b)) {
        bump(pair.first, 1);
        bump(pair.second, 1);
        return true;
      }
    }
    return false;
  }
  // After the two counters were added to as any labeled series (find(), increment()):
  // remembers them as a pair when both label sets are this thread's remembered series (a label
  // set the series budget refused never is, so a refusal stays decided on each use).
  void remember_pair(uint8_t first_family, uint8_t second_family, uint64_t prefix,
                     std::string_view a, std::string_view b);

  // Adds every thread's counts since the previous fold to the exported series.
  void fold();

 private:
  using Cell = std::atomic<double>;
  static constexpr uint32_t kChunk = 512;  // cells per allocation; a series never straddles two

  // The index key: the family, the prefix's eight bytes, then each value (base/key_parts.h).
  static constexpr size_t kValuesAt = 1 + sizeof(uint64_t);

  struct LastSeries {
    std::string key;  // as key_of wrote it; empty until the family's first use
    uint64_t prefix = 0;
    Handle handle;
    bool matches(uint64_t p, LabelValues values) const {
      if (p != prefix || key.empty()) return false;
      const char* at = key.data() + kValuesAt;
      const char* const end = key.data() + key.size();
      for (auto v : values) {
        at = base::match_key_part(at, end, v);
        if (at == nullptr) return false;
      }
      return at == end;
    }
  };
  // A family's series met before the last one on this thread, for traffic that alternates
  // between label sets (an insert, then a find, of one collection): compared, after the last
  // one, before any key is built.
  static constexpr size_t kEarlier = 3;
  struct Earlier {
    std::array<LastSeries, kEarlier> series;
    uint8_t next = 0;  // the one to replace next: the one met longest ago
    [[gnu::noinline]] const LastSeries* find(uint64_t prefix, LabelValues values) const {
      for (const LastSeries& s : series) {
        if (s.matches(prefix, values)) return &s;
      }
      return nullptr;
    }
  };
  // A counter pair (increment_known_pair), its cells found once: a series' cells never move.
  static constexpr size_t kPairs = 4;
  struct CounterPair {
    // a, then b, and where a ends ("ab" then "c" is not "a" then "bc"): as unambiguous as
    // base's key parts, and compared on every message in about 35 instructions fewer.
    std::string key;  // empty while unused
    size_t a_size = 0;
    uint64_t prefix = 0;
    Cell* first = nullptr;
    Cell* second = nullptr;
    bool matches(uint64_t p, std::string_view a, std::string_view b) const {
      return p == prefix && a_size == a.size() && key.size() == a.size() + b.size() &&
             first != nullptr && base::same_bytes(key.data(), a.data(), a.size()) &&
             base::same_bytes(key.data() + a.size(), b.data(), b.size());
    }
  };
  struct Thread {
    std::thread::id id;
    std::array<CounterPair, kPairs> pairs;
    uint8_t next_pair = 0;  // the one remember_pair replaces next
    // Written by the owning thread only; a scrape reads the cells under `mutex`, which the
    // owner takes only to add a chunk.
    std::mutex mutex;
    std::vector<std::unique_ptr<Cell[]>> chunks;
    std::unordered_map<std::string, Handle, base::StringHash, std::equal_to<>> index;
    std::array<LastSeries, kFamilies> last;
    std::array<Earlier, kFamilies> earlier;
    // The family's last series, or one met before it; null when neither is this label set.
    [[gnu::always_inline]] const LastSeries* known(uint8_t family, uint64_t prefix,
                                                   LabelValues values) const {
      if (last[family].matches(prefix, values)) return &last[family];
      return earlier[family].find(prefix, values);
    }
    std::string key_buffer;  // key_of's, reused

    std::string_view key_of(uint8_t family, uint64_t prefix, LabelValues values) {
      key_buffer.assign(1, static_cast<char>(family));
      key_buffer.append(reinterpret_cast<const char*>(&prefix), sizeof prefix);
      for (auto v : values) base::append_key_part(key_buffer, v);
      return key_buffer;
    }

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

  static void observe_in(Thread& t, Handle histogram, double v) {
    // The bucket prometheus::Histogram::Observe picks: the first bound >= v (+Inf past the
    // last; NaN in the first). Scanned from the smallest: docguard's histograms have at most 13
    // bounds and most values fall in the first few, where a binary search still takes
    // its four steps.
    const Bounds& b = *histogram.bounds;
    uint32_t bucket = 0;
    for (const size_t n = b.size(); bucket < n && b[bucket] < v;) ++bucket;
    // A series' cells are in one chunk (add_series): found once.
    Cell* const cells = t.cell(histogram.slot);
    bump(cells + bucket, 1);
    bump(cells + b.size() + 1, v);
  }
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

}  // namespace docguard::telemetry
