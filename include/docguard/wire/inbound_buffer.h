// Bytes received from one peer and not yet handled: read into it as much as the socket has,
// then take every complete message out of it in place (no copy per message).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "docguard/wire/message.h"

namespace docguard::wire {

class InboundBuffer {
 public:
  // Capacity kept while a connection is idle: small messages (hello, CRUD, most replies) fit,
  // and an idle connection stays cheap.
  static constexpr size_t kIdleCapacity = 1536;

  explicit InboundBuffer(uint32_t max_message_bytes) : max_message_bytes_(max_message_bytes) {}

  // Where the next read may write: room for at least what the message being received still
  // needs (the whole of it when its header is in), allocated without zero-filling.
  std::span<uint8_t> writable();
  void commit(size_t n) { end_ += n; }

  // The next complete message (header included), consumed; empty if more bytes are needed.
  // Throws ProtocolError as soon as a header declares a length outside [16, max]. The view
  // stays valid until the next call to writable() or shrink().
  Bytes next_message();

  size_t pending() const { return end_ - start_; }
  size_t capacity() const { return capacity_; }
  // Back to kIdleCapacity when nothing is pending (after large messages).
  void shrink();

 private:
  void reserve(size_t needed);

  uint32_t max_message_bytes_;
  std::unique_ptr<uint8_t[]> data_;
  size_t capacity_ = 0;
  size_t start_ = 0;
  size_t end_ = 0;
};

}  // namespace docguard::wire
