// Bytes received from one peer and not yet handled: read into it as much as the socket has,
// then take every complete message out of it in place (no copy per message).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "docguard/codec/message.h"

namespace docguard::codec {

class InboundBuffer {
 public:
  // Capacity kept while a connection is idle: small messages (hello, CRUD, most replies) fit,
  // and an idle connection stays cheap.
  static constexpr size_t kIdleCapacity = 1536;

  explicit InboundBuffer(uint32_t max_message_bytes) : max_message_bytes_(max_message_bytes) {}

  // Where the next read may write: room for at least what the message being received still
  // needs (the whole of it when its header is in), allocated without zero-filling.
  std::span<uint8_t> writable();
  void commit(size_t n) {
    end_ += n;
    last_read_filled_ = end_ == capacity_;
  }
  // Whether the last commit() filled all the room writable() offered: the socket may well
  // have more, so reading again before waiting for readiness is likely to find some.
  bool last_read_filled() const { return last_read_filled_; }

  // The next complete message (header included), consumed; empty if more bytes are needed.
  // Throws ProtocolError as soon as a header declares a length outside [16, max]. The view
  // stays valid until the next call to writable(), shrink() or release().
  Bytes next_message();

  size_t pending() const { return end_ - start_; }
  size_t capacity() const { return capacity_; }
  // Back to kIdleCapacity when nothing is pending (after large messages). The large block is
  // kept as this thread's spare, so a connection sending large messages one after another
  // reuses it instead of mapping and faulting in fresh memory for each.
  void shrink();
  // No block at all when nothing is pending: a small block goes to this thread's pool, where
  // the next writable() of any buffer on the thread takes it back; a large one is kept as by
  // shrink(). For a connection that waits for data without a buffer (readiness, then a read):
  // an idle connection then holds no receive memory.
  void release();

  // Small blocks this thread keeps for release()d buffers, at most kMaxPooledBlocks (about as
  // many as connections of one thread receive at the same moment).
  static size_t pooled_blocks();
  static constexpr size_t kMaxPooledBlocks = 64;

  // Frees this thread's spare block if no buffer took it for `idle` (a per-thread timer calls
  // this, so a burst of large messages does not pin memory forever).
  static void release_spare_if_unused(std::chrono::steady_clock::duration idle);
  static size_t spare_capacity();

  // Blocks kept as a spare: above kMinSpareBytes (smaller ones are cheap to allocate) and up
  // to kMaxSpareBytes (bigger ones are freed at once).
  static constexpr size_t kMinSpareBytes = size_t{64} * 1024;
  static constexpr size_t kMaxSpareBytes = 16 * 1024 * 1024 + 16 * 1024;

 private:
  void reserve(size_t needed);
  // The block to the thread's pool (small) or spare (large), or freed; leaves no block.
  void give_back_block();

  uint32_t max_message_bytes_;
  bool last_read_filled_ = false;
  std::unique_ptr<uint8_t[]> data_;
  size_t capacity_ = 0;
  size_t start_ = 0;
  size_t end_ = 0;
};

}  // namespace docguard::codec
