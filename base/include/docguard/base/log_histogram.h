// docguard's one histogram of non-negative integers: log-linear buckets, exact below
// 2^(kSubBits + 1), then 2^kSubBits buckets per power of two (a bucket spans at most
// 1/2^kSubBits of its values), up to 2^kTopBit (larger values share the last bucket). Fixed size,
// so memory does not depend on how many values were seen; 64-bit counters, which never wrap.
//
// kKeepsTotals: the count, the largest value and the sum are kept as values arrive. Without them
// (the workload ledger, whose add is on every operation's path) an add is one increment, the
// count is summed from the buckets and the largest value is its bucket's upper end.
//
// One quantile formula for every user (the nearest rank): the q-quantile of n values is the
// ceil(q * n)-th smallest (at least the first), reported as the upper end of its bucket and never
// above the largest value seen.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

namespace docguard::base {

template <int kSubBits, int kTopBit, bool kKeepsTotals = true>
class LogHistogram {
  static_assert(kSubBits >= 1 && kSubBits <= 4 && kTopBit > kSubBits + 1 && kTopBit <= 64);

 public:
  static constexpr int kExact = 2 << kSubBits;
  static constexpr int kPerPower = 1 << kSubBits;
  static constexpr int kBuckets = kExact + (kTopBit - kSubBits - 1) * kPerPower;

  static constexpr int bucket_of(uint64_t value) {
    if (value < static_cast<uint64_t>(kExact)) return static_cast<int>(value);
    const int msb = 63 - std::countl_zero(value);  // >= kSubBits + 1
    const int bucket = kExact + (msb - kSubBits - 1) * kPerPower +
                       static_cast<int>((value >> (msb - kSubBits)) & (kPerPower - 1));
    return bucket < kBuckets ? bucket : kBuckets - 1;
  }
  // Smallest and largest value of `bucket` (the last bucket also holds every larger value).
  static constexpr uint64_t bucket_low(int bucket) {
    if (bucket < kExact) return static_cast<uint64_t>(bucket);
    const int msb = (bucket - kExact) / kPerPower + kSubBits + 1;
    const auto sub = static_cast<uint64_t>((bucket - kExact) % kPerPower);
    return (uint64_t{1} << msb) | (sub << (msb - kSubBits));
  }
  static constexpr uint64_t bucket_high(int bucket) {
    if (bucket < kExact) return static_cast<uint64_t>(bucket);
    if (bucket == kBuckets - 1 && kTopBit < 64) return UINT64_MAX;
    const int msb = (bucket - kExact) / kPerPower + kSubBits + 1;
    return bucket_low(bucket) + (uint64_t{1} << (msb - kSubBits)) - 1;
  }

  void add(uint64_t value) {
    ++counts_[static_cast<size_t>(bucket_of(value))];
    if constexpr (kKeepsTotals) {
      ++count_;
      max_ = std::max(max_, value);
      sum_ = value > UINT64_MAX - sum_ ? UINT64_MAX : sum_ + value;  // saturates, never wraps
    }
  }
  // A measured value that may be fractional, negative or huge: rounded down into range.
  void add_measured(double value) {
    add(!(value >= 0) ? 0 : value >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(value));
  }
  void merge(const LogHistogram& other) {
    for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
    count_ += other.count_;
    max_ = std::max(max_, other.max_);
    sum_ = other.sum_ > UINT64_MAX - sum_ ? UINT64_MAX : sum_ + other.sum_;
  }

  // See the file comment; 0 when empty.
  uint64_t quantile(double q) const {
    const uint64_t n = count();
    if (n == 0) return 0;
    const double wanted = std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(n));
    const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(wanted));
    const uint64_t largest = max();
    uint64_t seen = 0;
    for (int i = 0; i < kBuckets; ++i) {
      seen += counts_[static_cast<size_t>(i)];
      if (seen >= rank) return std::min(bucket_high(i), largest);
    }
    return largest;
  }
  uint64_t count() const {
    if constexpr (kKeepsTotals) return count_;
    uint64_t n = 0;
    for (const uint64_t c : counts_) n += c;
    return n;
  }
  uint64_t max() const {
    if constexpr (kKeepsTotals) return max_;
    for (int i = kBuckets - 1; i >= 0; --i) {
      if (counts_[static_cast<size_t>(i)] != 0) return bucket_high(i);
    }
    return 0;
  }
  uint64_t sum() const requires kKeepsTotals { return sum_; }
  uint64_t bucket_count(int bucket) const { return counts_[static_cast<size_t>(bucket)]; }

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  uint64_t max_ = 0;
  uint64_t sum_ = 0;
};

}  // namespace docguard::base
