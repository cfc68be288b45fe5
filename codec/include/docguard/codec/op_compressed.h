// OP_COMPRESSED (opcode 2012): decompression for inspection, guarded against bombs.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "docguard/base/enum_names.h"
#include "docguard/codec/message.h"

namespace docguard::codec {

enum class Compressor : uint8_t { kNoop = 0, kSnappy = 1, kZlib = 2, kZstd = 3 };

// The names drivers use in hello's `compression` list (and docguard in metric labels).
inline constexpr auto kCompressorNames =
    base::enum_names<Compressor>({{Compressor::kNoop, "noop"},
                                  {Compressor::kSnappy, "snappy"},
                                  {Compressor::kZlib, "zlib"},
                                  {Compressor::kZstd, "zstd"}},
                                 "unknown");
inline std::optional<Compressor> compressor_from_name(std::string_view name) {
  return kCompressorNames.value(name);
}
inline const char* compressor_name(Compressor c) { return kCompressorNames.name(c); }

struct OpCompressed {
  MsgHeader header;
  OpCode original_op_code{};
  int32_t uncompressed_size = 0;  // excludes the header
  uint8_t compressor_id = 0;
  Bytes payload;

  static OpCompressed parse(Bytes message);
};

// Decompresses an OP_COMPRESSED message into the equivalent uncompressed message (a fresh
// 16-byte header with the original opcode, same requestID/responseTo, then the payload).
// Throws ProtocolError if the declared size exceeds max_message_bytes (checked before any
// allocation), if the real output size differs from the declared one, or on corrupt data.
std::vector<uint8_t> decompress_message(Bytes message, uint32_t max_message_bytes);

}  // namespace docguard::codec
