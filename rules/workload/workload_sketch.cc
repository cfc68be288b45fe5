#include "docguard/rules/workload_sketch.h"

#include <algorithm>

#include "docguard/rules/collection_stats.h"

namespace docguard::rules {

std::string_view workload_verdict_name(WorkloadVerdict verdict) {
  switch (verdict) {
    case WorkloadVerdict::kPassed:
      return "passed";
    case WorkloadVerdict::kWarned:
      return "warned";
    case WorkloadVerdict::kBlocked:
      return "blocked";
    case WorkloadVerdict::kCandidate:
      return "candidate";
  }
  return "passed";
}

uint32_t ShapeStats::find_or_add_app_line(std::string_view name) {
  for (size_t i = 0; i < apps.size(); ++i) {
    if (apps[i].app == name) return static_cast<uint32_t>(i);
  }
  if (apps.size() < kMaxAppsPerShape) {
    apps.push_back(AppStats{std::string(name), 0, 0});
  } else {
    // The apps past the bound share one "_other" line (a merge may have brought one already).
    for (size_t i = 0; i < apps.size(); ++i) {
      if (apps[i].app == kOverflowLabel) return static_cast<uint32_t>(i);
    }
    apps.push_back(AppStats{std::string(kOverflowLabel), 0, 0});
  }
  return static_cast<uint32_t>(apps.size() - 1);
}

void ShapeStats::merge(const ShapeStats& other) {
  count += other.count;
  micros += other.micros;
  replies += other.replies;
  documents += other.documents;
  errors += other.errors;
  unserved += other.unserved;
  for (size_t i = 0; i < verdicts.size(); ++i) verdicts[i] += other.verdicts[i];
  latency.merge(other.latency);
  for (const AppStats& a : other.apps) {
    AppStats& mine = app(a.app);
    mine.count += a.count;
    mine.micros += a.micros;
  }
}

WorkloadSketch::WorkloadSketch(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {
  // At most half full, so probes stay short.
  const size_t slots = std::bit_ceil(capacity_ * 2);
  mask_ = slots - 1;
  slots_.assign(slots, 0);
  entries_.reserve(capacity_);
}

void WorkloadSketch::insert_slot(uint64_t key, uint32_t at) {
  size_t slot = key & mask_;
  while (slots_[slot] != 0) slot = (slot + 1) & mask_;
  slots_[slot] = at;
}

void WorkloadSketch::erase_slot(uint64_t key) {
  size_t slot = key & mask_;
  while (slots_[slot] != 0 && entries_[slots_[slot] - 1].key != key) slot = (slot + 1) & mask_;
  if (slots_[slot] == 0) return;
  // Backward-shift deletion: entries after the hole that probed past it move into it.
  size_t hole = slot;
  for (size_t next = (hole + 1) & mask_; slots_[next] != 0; next = (next + 1) & mask_) {
    const size_t home = entries_[slots_[next] - 1].key & mask_;
    // Whether `home` lies cyclically in (hole, next]: then the entry stays.
    const bool stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
    if (!stays) {
      slots_[hole] = slots_[next];
      hole = next;
    }
  }
  slots_[hole] = 0;
}

SketchEntry& WorkloadSketch::admit(uint64_t key, std::shared_ptr<const ShapeInfo> info) {
  if (entries_.size() < capacity_) {
    SketchEntry& e = entries_.emplace_back();
    e.key = key;
    e.info = std::move(info);
    insert_slot(key, static_cast<uint32_t>(entries_.size()));
    return e;
  }
  // Full: a scan for the lightest, only when a shape not in the table arrives.
  auto lightest = std::min_element(
      entries_.begin(), entries_.end(),
      [](const SketchEntry& a, const SketchEntry& b) { return a.weight < b.weight; });
  overflow_.count += lightest->stats.count;
  overflow_.micros += lightest->stats.micros;
  erase_slot(lightest->key);
  const uint64_t inherited = lightest->weight;
  *lightest = SketchEntry{};
  lightest->key = key;
  lightest->weight = inherited;
  lightest->inherited = inherited;
  lightest->info = std::move(info);
  insert_slot(key, static_cast<uint32_t>(lightest - entries_.begin()) + 1);
  return *lightest;
}

}  // namespace docguard::rules
