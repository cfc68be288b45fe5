#include "docguard/codec/op_compressed.h"

#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <cstring>
#include <string>

#include "docguard/codec/error_kinds.h"

namespace docguard::codec {

OpCompressed OpCompressed::parse(Bytes message) {
  constexpr size_t kFixed = kHeaderSize + 9;
  if (message.size() < kFixed)
    throw ProtocolError(ErrorKind::kBadOpCompressed, "OP_COMPRESSED too short");
  OpCompressed c;
  c.header = read_header(message.data());
  c.original_op_code = static_cast<OpCode>(load_le32(message.data() + kHeaderSize));
  c.uncompressed_size = load_le32(message.data() + kHeaderSize + 4);
  c.compressor_id = message[kHeaderSize + 8];
  c.payload = message.subspan(kFixed);
  if (c.original_op_code == OpCode::kCompressed) {
    throw ProtocolError(ErrorKind::kBadOpCompressed, "OP_COMPRESSED wraps another OP_COMPRESSED");
  }
  return c;
}

std::vector<uint8_t> decompress_message(Bytes message, uint32_t max_message_bytes) {
  const OpCompressed c = OpCompressed::parse(message);
  // Check the declared size before allocating anything: a decompression bomb declares little
  // or lies; both are caught (here, and by the exact-size check below).
  if (c.uncompressed_size < 0 ||
      static_cast<uint64_t>(c.uncompressed_size) + kHeaderSize > max_message_bytes) {
    throw ProtocolError(ErrorKind::kDecompressionLimit,
                        "OP_COMPRESSED declares " + std::to_string(c.uncompressed_size) +
                            " uncompressed bytes, over the message limit");
  }
  const auto expected = static_cast<size_t>(c.uncompressed_size);
  std::vector<uint8_t> out(kHeaderSize + expected);
  uint8_t* dst = out.data() + kHeaderSize;
  size_t produced = 0;
  switch (static_cast<Compressor>(c.compressor_id)) {
    case Compressor::kNoop:
      produced = c.payload.size();
      if (produced != expected) break;
      std::memcpy(dst, c.payload.data(), produced);
      break;
    case Compressor::kSnappy: {
      size_t len = 0;
      if (snappy_uncompressed_length(reinterpret_cast<const char*>(c.payload.data()),
                                     c.payload.size(), &len) != SNAPPY_OK) {
        throw ProtocolError(ErrorKind::kBadCompressedData, "corrupt snappy data");
      }
      if (len != expected) {
        produced = len;
        break;
      }
      if (snappy_uncompress(reinterpret_cast<const char*>(c.payload.data()), c.payload.size(),
                            reinterpret_cast<char*>(dst), &len) != SNAPPY_OK) {
        throw ProtocolError(ErrorKind::kBadCompressedData, "corrupt snappy data");
      }
      produced = len;
      break;
    }
    case Compressor::kZlib: {
      z_stream zs{};
      if (inflateInit(&zs) != Z_OK)
        throw ProtocolError(ErrorKind::kBadCompressedData, "zlib init failed");
      zs.next_in = const_cast<Bytef*>(c.payload.data());
      zs.avail_in = static_cast<uInt>(c.payload.size());
      zs.next_out = dst;
      zs.avail_out = static_cast<uInt>(expected);
      const int rc = inflate(&zs, Z_FINISH);
      produced = zs.total_out;
      // Z_BUF_ERROR with no output space left means the data wants more than declared.
      const bool overflow = rc == Z_BUF_ERROR && zs.avail_out == 0;
      inflateEnd(&zs);
      if (overflow) {
        produced = expected + 1;
        break;
      }
      if (rc != Z_STREAM_END)
        throw ProtocolError(ErrorKind::kBadCompressedData, "corrupt zlib data");
      break;
    }
    case Compressor::kZstd: {
      const size_t rc = ZSTD_decompress(dst, expected, c.payload.data(), c.payload.size());
      if (ZSTD_isError(rc)) {
        if (ZSTD_getErrorCode(rc) == ZSTD_error_dstSize_tooSmall) {
          produced = expected + 1;
          break;
        }
        throw ProtocolError(ErrorKind::kBadCompressedData,
                            std::string("corrupt zstd data: ") + ZSTD_getErrorName(rc));
      }
      produced = rc;
      break;
    }
    default:
      throw ProtocolError(ErrorKind::kBadOpCompressed,
                          "unknown compressorId " + std::to_string(c.compressor_id));
  }
  if (produced != expected) {
    throw ProtocolError(ErrorKind::kDecompressionSize,
                        "OP_COMPRESSED payload does not decompress to its declared size");
  }
  write_header(out.data(), MsgHeader{static_cast<int32_t>(out.size()), c.header.request_id,
                                     c.header.response_to, c.original_op_code});
  return out;
}

}  // namespace docguard::codec
