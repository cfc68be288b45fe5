#include "docguard/codec/frame_reader.h"

#include <cstring>

namespace docguard::codec {

void FrameReader::feed(Bytes bytes) {
  // Compact lazily: only when the consumed prefix dominates the buffer.
  if (start_ > 0 && start_ >= buffer_.size() / 2) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(start_));
    start_ = 0;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
  if (buffered() >= kHeaderSize) {
    check_message_length(read_header(buffer_.data() + start_), max_message_bytes_);
  }
}

std::optional<std::vector<uint8_t>> FrameReader::next() {
  if (buffered() < kHeaderSize) return std::nullopt;
  const MsgHeader header = read_header(buffer_.data() + start_);
  check_message_length(header, max_message_bytes_);
  const auto length = static_cast<size_t>(header.message_length);
  if (buffered() < length) return std::nullopt;
  std::vector<uint8_t> message(buffer_.begin() + static_cast<std::ptrdiff_t>(start_),
                               buffer_.begin() + static_cast<std::ptrdiff_t>(start_ + length));
  start_ += length;
  if (start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  } else if (buffered() >= kHeaderSize) {
    check_message_length(read_header(buffer_.data() + start_), max_message_bytes_);
  }
  return message;
}

}  // namespace docguard::codec
