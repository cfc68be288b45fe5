#include "docguard/telemetry/thread_cells.h"

namespace docguard::telemetry {

namespace {
std::atomic<uint64_t> g_next_id{1};
}  // namespace

constinit thread_local ThreadCells::Cache ThreadCells::t_cache{};

ThreadCells::ThreadCells() : id_(g_next_id.fetch_add(1)) {}

ThreadCells::~ThreadCells() = default;

void ThreadCells::Thread::add_chunks(uint32_t up_to) {
  std::lock_guard lock(mutex);
  while (chunks.size() <= up_to) {
    auto chunk = std::make_unique<Cell[]>(kChunk);
    for (uint32_t i = 0; i < kChunk; ++i) chunk[i].store(0, std::memory_order_relaxed);
    chunks.push_back(std::move(chunk));
  }
}

ThreadCells::Thread& ThreadCells::this_thread_slow() {
  std::lock_guard lock(mutex_);
  const auto me = std::this_thread::get_id();
  Thread* found = nullptr;
  for (auto& t : threads_) {
    if (t->id == me) found = t.get();
  }
  if (found == nullptr) {
    threads_.push_back(std::make_unique<Thread>());
    found = threads_.back().get();
    found->id = me;
  }
  t_cache = Cache{id_, found};
  return *found;
}

void ThreadCells::remember_pair(uint8_t first_family, uint8_t second_family, uint64_t prefix,
                                std::string_view a, std::string_view b) {
  Thread& t = this_thread();
  const LastSeries* first = t.known(first_family, prefix, {a});
  const LastSeries* second = t.known(second_family, 0, {b, a});
  if (first == nullptr || second == nullptr || first->handle.bounds != nullptr ||
      second->handle.bounds != nullptr) {
    return;
  }
  CounterPair& pair = t.pairs[t.next_pair];
  t.next_pair = static_cast<uint8_t>((t.next_pair + 1) % kPairs);
  pair.key.assign(a).append(b);
  pair.a_size = a.size();
  pair.prefix = prefix;
  pair.first = t.cell(first->handle.slot);
  pair.second = t.cell(second->handle.slot);
}

ThreadCells::Handle ThreadCells::add(prometheus::Counter& series) {
  Series s;
  s.counter = &series;
  s.cells = 1;
  return add_series(std::move(s));
}

ThreadCells::Handle ThreadCells::add(prometheus::Histogram& series, const Bounds& bounds) {
  Series s;
  s.histogram = &series;
  s.handle.bounds = &bounds;
  s.cells = static_cast<uint32_t>(bounds.size()) + 2;  // buckets, +Inf, sum
  return add_series(std::move(s));
}

ThreadCells::Handle ThreadCells::add_series(Series s) {
  const void* key = s.counter != nullptr ? static_cast<const void*>(s.counter)
                                         : static_cast<const void*>(s.histogram);
  std::lock_guard lock(mutex_);
  if (auto it = by_series_.find(key); it != by_series_.end()) return it->second;
  if (next_slot_ % kChunk + s.cells > kChunk) next_slot_ += kChunk - next_slot_ % kChunk;
  s.handle.slot = next_slot_;
  next_slot_ += s.cells;
  s.folded.assign(s.cells, 0.0);
  by_series_.emplace(key, s.handle);
  series_.push_back(std::move(s));
  return series_.back().handle;
}

void ThreadCells::fold() {
  std::lock_guard lock(mutex_);
  std::vector<std::unique_lock<std::mutex>> held;
  held.reserve(threads_.size());
  for (auto& t : threads_) held.emplace_back(t->mutex);
  std::vector<double> totals;
  std::vector<double> increments;
  for (Series& s : series_) {
    totals.assign(s.cells, 0.0);
    for (auto& t : threads_) {
      const uint32_t chunk = s.handle.slot / kChunk;
      if (chunk >= t->chunks.size()) continue;  // this thread never touched the series
      const Cell* cells = &t->chunks[chunk][s.handle.slot % kChunk];
      for (uint32_t i = 0; i < s.cells; ++i) totals[i] += cells[i].load(std::memory_order_relaxed);
    }
    if (s.counter != nullptr) {
      if (totals[0] > s.folded[0]) s.counter->Increment(totals[0] - s.folded[0]);
      s.folded = totals;
      continue;
    }
    const uint32_t buckets = s.cells - 1;  // the bounds' buckets and +Inf
    increments.assign(buckets, 0.0);
    bool any = false;
    for (uint32_t i = 0; i < buckets; ++i) {
      increments[i] = totals[i] - s.folded[i];
      any = any || increments[i] > 0;
    }
    if (any) s.histogram->ObserveMultiple(increments, totals[buckets] - s.folded[buckets]);
    s.folded = totals;
  }
}

}  // namespace docguard::telemetry
