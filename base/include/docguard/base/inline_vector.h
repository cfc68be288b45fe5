// A vector whose first N elements live inside the object: per-message lists (a write's
// statements, a message's kind-1 sections) mostly hold one or two entries, and filling a
// std::vector for them costs an allocation and a free on every message. Past N, every element
// moves to a std::vector. Only what those lists use: appending, indexing, iterating, clearing.
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace docguard::base {

template <typename T, size_t N>
class InlineVector {
 public:
  // The inline slots hold no element until one is appended: a fresh vector (one per message in
  // a parsed message and its command view) costs setting a count, not constructing N elements.
  InlineVector() {}
  InlineVector(const InlineVector& other) : spilled_(other.spilled_) { copy_inline(other); }
  InlineVector(InlineVector&& other) noexcept(std::is_nothrow_move_constructible_v<T>)
      : spilled_(std::move(other.spilled_)) {
    move_inline(other);
  }
  InlineVector& operator=(const InlineVector& other) {
    if (this != &other) {
      destroy_inline();
      spilled_ = other.spilled_;
      copy_inline(other);
    }
    return *this;
  }
  InlineVector& operator=(InlineVector&& other) noexcept(std::is_nothrow_move_constructible_v<T>) {
    if (this != &other) {
      destroy_inline();
      spilled_ = std::move(other.spilled_);
      other.spilled_.clear();
      move_inline(other);
    }
    return *this;
  }
  ~InlineVector() { destroy_inline(); }

  T& emplace_back() {
    if (spilled_.empty() && count_ < N) {
      T* added = new (slot(count_)) T();
      ++count_;
      return *added;
    }
    if (spilled_.empty()) {
      spilled_.reserve(2 * N);
      for (size_t i = 0; i < count_; ++i) spilled_.push_back(std::move(item(i)));
      destroy_inline();
    }
    return spilled_.emplace_back();
  }
  void push_back(const T& value) {
    // The common case inline, without emplace_back's value-initialisation of the slot first;
    // the spill, rare, out of line.
    if (spilled_.empty() && count_ < N) {
      new (slot(count_)) T(value);
      ++count_;
      return;
    }
    push_back_spilled(value);
  }
  void clear() {
    spilled_.clear();
    destroy_inline();
  }

  size_t size() const { return spilled_.empty() ? count_ : spilled_.size(); }
  bool empty() const { return size() == 0; }
  T* data() { return spilled_.empty() ? items() : spilled_.data(); }
  const T* data() const { return spilled_.empty() ? items() : spilled_.data(); }
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
  [[gnu::noinline]] void push_back_spilled(const T& value) {
    T copy(value);  // `value` may be an inline element, which the spill moves away
    emplace_back() = std::move(copy);
  }
  void* slot(size_t i) { return storage_ + i * sizeof(T); }
  T* items() { return std::launder(reinterpret_cast<T*>(storage_)); }
  const T* items() const { return std::launder(reinterpret_cast<const T*>(storage_)); }
  T& item(size_t i) { return items()[i]; }
  const T& item(size_t i) const { return items()[i]; }
  // Elements of a trivially copyable type are copied as the whole inline block, a fixed size
  // the compiler copies without a loop (the unused slots' bytes come along, never read).
  void copy_inline(const InlineVector& other) {
    if constexpr (std::is_trivially_copyable_v<T>) {
      std::memcpy(storage_, other.storage_, sizeof storage_);
    } else {
      for (size_t i = 0; i < other.count_; ++i) new (slot(i)) T(other.item(i));
    }
    count_ = other.count_;
  }
  void move_inline(InlineVector& other) {
    if constexpr (std::is_trivially_copyable_v<T>) {
      std::memcpy(storage_, other.storage_, sizeof storage_);
    } else {
      for (size_t i = 0; i < other.count_; ++i) new (slot(i)) T(std::move(other.item(i)));
    }
    count_ = other.count_;
    other.destroy_inline();
  }
  void destroy_inline() {
    if constexpr (!std::is_trivially_destructible_v<T>) {
      for (size_t i = 0; i < count_; ++i) item(i).~T();
    }
    count_ = 0;
  }

  alignas(T) unsigned char storage_[N * sizeof(T)];  // elements [0, count_) constructed
  size_t count_ = 0;                                 // elements inline while nothing has spilled
  std::vector<T> spilled_;                           // every element, once there were more than N
};

}  // namespace docguard::base
