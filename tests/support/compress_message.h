// OP_COMPRESSED messages for tests: docguard itself only decompresses (codec's
// decompress_message), so compressing is test code, for what a driver would send.
#pragma once

#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdint>
#include <vector>

#include "docguard/codec/op_compressed.h"

namespace docguard::testing {

// Compresses a whole message (header included) into OP_COMPRESSED with `compressor`.
inline std::vector<uint8_t> compress_message(codec::Bytes message, codec::Compressor compressor) {
  using codec::kHeaderSize;
  const codec::MsgHeader h = codec::read_header(message.data());
  const codec::Bytes body = message.subspan(kHeaderSize);
  std::vector<uint8_t> payload;
  switch (compressor) {
    case codec::Compressor::kNoop:
      payload.assign(body.begin(), body.end());
      break;
    case codec::Compressor::kSnappy: {
      size_t len = snappy_max_compressed_length(body.size());
      payload.resize(len);
      snappy_compress(reinterpret_cast<const char*>(body.data()), body.size(),
                      reinterpret_cast<char*>(payload.data()), &len);
      payload.resize(len);
      break;
    }
    case codec::Compressor::kZlib: {
      uLongf len = compressBound(static_cast<uLong>(body.size()));
      payload.resize(len);
      compress2(payload.data(), &len, body.data(), static_cast<uLong>(body.size()), 6);
      payload.resize(len);
      break;
    }
    case codec::Compressor::kZstd: {
      size_t len = ZSTD_compressBound(body.size());
      payload.resize(len);
      len = ZSTD_compress(payload.data(), len, body.data(), body.size(), 1);
      payload.resize(len);
      break;
    }
  }
  std::vector<uint8_t> out(kHeaderSize + 9);
  codec::write_header(
      out.data(), codec::MsgHeader{static_cast<int32_t>(out.size() + payload.size()), h.request_id,
                                   h.response_to, codec::OpCode::kCompressed});
  codec::store_le32(out.data() + kHeaderSize, static_cast<int32_t>(h.op_code));
  codec::store_le32(out.data() + kHeaderSize + 4, static_cast<int32_t>(body.size()));
  out[kHeaderSize + 8] = static_cast<uint8_t>(compressor);
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

}  // namespace docguard::testing
