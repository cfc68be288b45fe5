// Every kind of error docguard counts, declared once: the codec throws ProtocolError with these
// kinds, the proxy counts them in docguard_protocol_errors_total{kind} and
// docguard_upstream_errors_total{kind} and pre-creates every label from the lists below, and the
// metrics table in docs/metrics.md names them. A new kind is one line here and one in its list.
#pragma once

#include <array>

namespace docguard::codec::errors {

// What a client (or, for bad_op_reply, an upstream) sent that docguard could not accept.
inline constexpr const char* kBadLength = "bad_length";
inline constexpr const char* kTooLarge = "too_large";
inline constexpr const char* kBadOpMsg = "bad_op_msg";
inline constexpr const char* kBadBson = "bad_bson";
inline constexpr const char* kChecksum = "checksum";
inline constexpr const char* kUnknownRequiredFlag = "unknown_required_flag";
inline constexpr const char* kBadOpQuery = "bad_op_query";
inline constexpr const char* kBadOpReply = "bad_op_reply";
inline constexpr const char* kBadOpCompressed = "bad_op_compressed";
inline constexpr const char* kBadCompressedData = "bad_compressed_data";
inline constexpr const char* kDecompressionLimit = "decompression_limit";
inline constexpr const char* kDecompressionSize = "decompression_size";
inline constexpr const char* kTruncatedFrame = "truncated_frame";
inline constexpr const char* kClientFrameTimeout = "client_frame_timeout";
inline constexpr const char* kIdleTimeout = "idle_timeout";
inline constexpr const char* kTlsHandshake = "tls_handshake";

// What went wrong with the upstream.
namespace upstream {
inline constexpr const char* kConnect = "connect";
inline constexpr const char* kClosed = "closed";
inline constexpr const char* kBadReply = "bad_reply";
inline constexpr const char* kTimeout = "timeout";
inline constexpr const char* kTls = "tls";
}  // namespace upstream

// Counted as protocol errors (kBadOpReply is a malformed upstream reply: counted as
// upstream::kBadReply).
inline constexpr std::array kProtocolErrorKinds = {kBadLength,          kTooLarge,
                                                   kBadOpMsg,           kBadBson,
                                                   kChecksum,           kUnknownRequiredFlag,
                                                   kBadOpQuery,         kBadOpCompressed,
                                                   kBadCompressedData,  kDecompressionLimit,
                                                   kDecompressionSize,  kTruncatedFrame,
                                                   kClientFrameTimeout, kIdleTimeout,
                                                   kTlsHandshake};
inline constexpr std::array kUpstreamErrorKinds = {
    upstream::kConnect, upstream::kClosed, upstream::kBadReply, upstream::kTimeout, upstream::kTls};

}  // namespace docguard::codec::errors
