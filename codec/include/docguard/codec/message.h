// Message framing for the MongoDB wire protocol: the 16-byte header, opcodes and limits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

#include "docguard/codec/error_kinds.h"

namespace docguard::codec {

using Bytes = std::span<const uint8_t>;

// The header's opCode. The enum holds any int32_t the wire carries: a value it does not name
// (an opcode docguard does not know) reads and writes back unchanged.
enum class OpCode : int32_t {
  kReply = 1,
  kUpdate = 2001,
  kInsert = 2002,
  kQuery = 2004,
  kGetMore = 2005,
  kDelete = 2006,
  kKillCursors = 2007,
  kCompressed = 2012,
  kMsg = 2013,
};

constexpr size_t kHeaderSize = 16;
// Server defaults.
constexpr uint32_t kDefaultMaxMessageBytes = 48'000'000;
constexpr uint32_t kMaxBsonObjectSize = 16 * 1024 * 1024;

struct MsgHeader {
  int32_t message_length = 0;
  int32_t request_id = 0;
  int32_t response_to = 0;
  OpCode op_code{};
};

// A malformed or unsupported message: what was wrong with it (its metric label is
// name(kind()), see error_kinds.h); what() explains it to a human. Where it came from is the
// catcher's to say: the codec does not know which side sent the bytes.
class ProtocolError : public std::runtime_error {
 public:
  ProtocolError(ErrorKind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

inline int32_t load_le32(const uint8_t* p) {
  return static_cast<int32_t>(static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
                              (static_cast<uint32_t>(p[2]) << 16) |
                              (static_cast<uint32_t>(p[3]) << 24));
}
inline void store_le32(uint8_t* p, int32_t v) {
  auto u = static_cast<uint32_t>(v);
  p[0] = static_cast<uint8_t>(u);
  p[1] = static_cast<uint8_t>(u >> 8);
  p[2] = static_cast<uint8_t>(u >> 16);
  p[3] = static_cast<uint8_t>(u >> 24);
}

// Reads the header from the first 16 bytes (caller guarantees they exist). Inline: every
// request and reply reads it several times, and the call cost more than the four loads.
inline MsgHeader read_header(const uint8_t* data) {
  return MsgHeader{load_le32(data), load_le32(data + 4), load_le32(data + 8),
                   static_cast<OpCode>(load_le32(data + 12))};
}
void write_header(uint8_t* data, const MsgHeader& header);

// Validates a header's declared length against [16, max_message_bytes]; throws ProtocolError.
void check_message_length(const MsgHeader& header, uint32_t max_message_bytes);

}  // namespace docguard::codec
