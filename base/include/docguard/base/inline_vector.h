// A vector whose first N elements live inside the object: per-message lists (a write's
// statements, a message's kind-1 sections) mostly hold one or two entries, and filling a
// std::vector for them costs an allocation and a free on every message. Past N, every element
// moves to a std::vector. Only what those lists use: appending, indexing, iterating, clearing.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace docguard::base {

template <typename T, size_t N>
class InlineVector {
 public:
  InlineVector() = default;

  T& emplace_back() {
    if (spilled_.empty() && count_ < N) {
      inline_[count_] = T();
      return inline_[count_++];
    }
    if (spilled_.empty()) {
      spilled_.reserve(2 * N);
      for (size_t i = 0; i < count_; ++i) spilled_.push_back(std::move(inline_[i]));
      count_ = 0;
    }
    return spilled_.emplace_back();
  }
  void push_back(const T& value) {
    // The common case inline, without emplace_back's value-initialisation of the slot first;
    // the spill, rare, out of line.
    if (spilled_.empty() && count_ < N) {
      inline_[count_++] = value;
      return;
    }
    push_back_spilled(value);
  }
  void clear() {
    spilled_.clear();
    count_ = 0;
  }

  size_t size() const { return spilled_.empty() ? count_ : spilled_.size(); }
  bool empty() const { return size() == 0; }
  T* data() { return spilled_.empty() ? inline_.data() : spilled_.data(); }
  const T* data() const { return spilled_.empty() ? inline_.data() : spilled_.data(); }
  T* begin() { return data(); }
  T* end() { return data() + size(); }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size(); }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size() - 1]; }
  const T& back() const { return data()[size() - 1]; }
  // Passes as a span, as a std::vector does.
  operator std::span<const T>() const { return {data(), size()}; }

 private:
  [[gnu::noinline]] void push_back_spilled(const T& value) { emplace_back() = value; }

  std::array<T, N> inline_{};
  size_t count_ = 0;        // elements in inline_ while nothing has spilled
  std::vector<T> spilled_;  // every element, once there were more than N
};

}  // namespace docguard::base
