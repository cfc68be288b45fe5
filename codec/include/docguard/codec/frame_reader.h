// Push-based framing: feed bytes as they arrive, take whole messages out.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "docguard/codec/message.h"

namespace docguard::codec {

// Accumulates bytes and yields one complete message at a time. The declared length is checked
// as soon as the header is complete, so an oversized frame is rejected before it is buffered.
class FrameReader {
 public:
  explicit FrameReader(uint32_t max_message_bytes = kDefaultMaxMessageBytes)
      : max_message_bytes_(max_message_bytes) {}

  // Appends bytes; throws ProtocolError once a header declares an invalid length.
  void feed(Bytes bytes);
  // Returns the next complete message (header included), or nullopt if more bytes are needed.
  std::optional<std::vector<uint8_t>> next();
  size_t buffered() const { return buffer_.size() - start_; }

 private:
  uint32_t max_message_bytes_;
  std::vector<uint8_t> buffer_;
  size_t start_ = 0;
};

}  // namespace docguard::codec
