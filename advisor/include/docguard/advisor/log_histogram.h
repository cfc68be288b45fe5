// A histogram of non-negative integers in logarithmic buckets: exact below 16, then 8 buckets per
// power of two (values within ~12% of each other share a bucket). Fixed size (~4 KiB), so a
// profile's memory does not depend on how many values it has seen.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

namespace docguard::advisor {

class LogHistogram {
 public:
  static constexpr int kBuckets = 16 + 60 * 8;

  static int bucket_of(uint64_t value) {
    if (value < 16) return static_cast<int>(value);
    const int msb = 63 - std::countl_zero(value);  // >= 4
    return 16 + (msb - 4) * 8 + static_cast<int>((value >> (msb - 3)) & 7);
  }
  // Smallest and largest value that fall in `bucket`.
  static uint64_t bucket_low(int bucket) {
    if (bucket < 16) return static_cast<uint64_t>(bucket);
    const int msb = (bucket - 16) / 8 + 4;
    const uint64_t sub = static_cast<uint64_t>((bucket - 16) % 8);
    return (uint64_t{1} << msb) | (sub << (msb - 3));
  }
  static uint64_t bucket_high(int bucket) {
    if (bucket < 16) return static_cast<uint64_t>(bucket);
    const int msb = (bucket - 16) / 8 + 4;
    return bucket_low(bucket) + (uint64_t{1} << (msb - 3)) - 1;
  }

  void add(uint64_t value) {
    ++counts_[bucket_of(value)];
    ++count_;
    if (value > max_) max_ = value;
    sum_ += value;
  }
  void merge(const LogHistogram& other) {
    for (int i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
    count_ += other.count_;
    sum_ += other.sum_;
    if (other.max_ > max_) max_ = other.max_;
  }

  // The value below which a share q of the values fall, as the upper end of its bucket (never
  // above the largest value seen). 0 when empty.
  uint64_t quantile(double q) const {
    if (count_ == 0) return 0;
    const uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(count_ - 1)) + 1;
    uint64_t seen = 0;
    for (int i = 0; i < kBuckets; ++i) {
      seen += counts_[i];
      if (seen >= rank) return bucket_high(i) < max_ ? bucket_high(i) : max_;
    }
    return max_;
  }
  uint64_t count() const { return count_; }
  uint64_t max() const { return max_; }
  uint64_t sum() const { return sum_; }
  uint64_t bucket_count(int bucket) const { return counts_[bucket]; }

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  uint64_t max_ = 0;
  uint64_t sum_ = 0;
};

}  // namespace docguard::advisor
