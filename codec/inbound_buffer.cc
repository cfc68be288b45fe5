#include "docguard/codec/inbound_buffer.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace docguard::codec {
namespace {

// One spare large block per thread. A connection lives on one io thread, so the block a
// connection gave back is there for its next large message.
struct SpareBlock {
  std::unique_ptr<uint8_t[]> data;
  size_t capacity = 0;
  std::chrono::steady_clock::time_point since{};
};
thread_local SpareBlock t_spare;

// Blocks of kIdleCapacity given back by idle connections (release()), for the next connection
// of this thread that receives data.
thread_local std::vector<std::unique_ptr<uint8_t[]>> t_small_blocks;

}  // namespace

void InboundBuffer::reserve(size_t needed) {
  if (start_ > 0 && (needed > capacity_ - start_ || pending() == 0)) {
    // Move the partial message to the front before growing (or when it costs nothing).
    std::memmove(data_.get(), data_.get() + start_, pending());
    end_ -= start_;
    start_ = 0;
  }
  if (needed <= capacity_) return;
  size_t grown = std::max(needed, kIdleCapacity);
  std::unique_ptr<uint8_t[]> bigger;
  if (grown == kIdleCapacity && capacity_ == 0 && !t_small_blocks.empty()) {
    bigger = std::move(t_small_blocks.back());
    t_small_blocks.pop_back();
  } else if (grown > kMinSpareBytes && t_spare.capacity >= grown) {
    bigger = std::move(t_spare.data);
    grown = t_spare.capacity;
    t_spare.capacity = 0;
  } else {
    // new[] of a scalar type leaves the bytes uninitialised: no zero-fill of 16 MiB buffers.
    bigger.reset(new uint8_t[grown]);
  }
  if (pending() > 0) std::memcpy(bigger.get(), data_.get() + start_, pending());
  end_ = pending();
  start_ = 0;
  data_ = std::move(bigger);
  capacity_ = grown;
}

std::span<uint8_t> InboundBuffer::writable() {
  size_t want = kHeaderSize;  // at least a header
  if (pending() >= kHeaderSize) {
    const MsgHeader header = read_header(data_.get() + start_);
    check_message_length(header, max_message_bytes_);
    want = static_cast<size_t>(header.message_length);
  }
  // Room for the rest of this message (and for small ones behind it).
  reserve(std::max(want, kIdleCapacity));
  if (end_ == capacity_) reserve(capacity_ + kIdleCapacity);  // defensive: never an empty span
  return {data_.get() + end_, capacity_ - end_};
}

Bytes InboundBuffer::next_message() {
  if (pending() < kHeaderSize) return {};
  const MsgHeader header = read_header(data_.get() + start_);
  check_message_length(header, max_message_bytes_);
  const auto length = static_cast<size_t>(header.message_length);
  if (pending() < length) return {};
  Bytes message{data_.get() + start_, length};
  start_ += length;
  if (start_ == end_) start_ = end_ = 0;  // the view stays valid: nothing is moved here
  return message;
}

void InboundBuffer::give_back_block() {
  if (capacity_ == kIdleCapacity) {
    if (t_small_blocks.size() < kMaxPooledBlocks) t_small_blocks.push_back(std::move(data_));
  } else if (capacity_ > kMinSpareBytes && capacity_ <= kMaxSpareBytes &&
             capacity_ > t_spare.capacity) {
    t_spare.data = std::move(data_);
    t_spare.capacity = capacity_;
    t_spare.since = std::chrono::steady_clock::now();
  }
  data_.reset();
  capacity_ = 0;
  start_ = end_ = 0;
}

void InboundBuffer::shrink() {
  if (pending() != 0 || capacity_ <= kIdleCapacity) return;
  give_back_block();
  data_.reset(new uint8_t[kIdleCapacity]);
  capacity_ = kIdleCapacity;
}

void InboundBuffer::release() {
  if (pending() != 0 || capacity_ == 0) return;
  give_back_block();
}

size_t InboundBuffer::pooled_blocks() { return t_small_blocks.size(); }

void InboundBuffer::release_spare_if_unused(std::chrono::steady_clock::duration idle) {
  if (t_spare.capacity > 0 && std::chrono::steady_clock::now() - t_spare.since >= idle) {
    t_spare.data.reset();
    t_spare.capacity = 0;
  }
}

size_t InboundBuffer::spare_capacity() { return t_spare.capacity; }

}  // namespace docguard::codec
