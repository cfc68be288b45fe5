#include "docguard/codec/error_kinds.h"

#include "docguard/base/enum_names.h"

namespace docguard::codec {
namespace {

constexpr auto kKindNames =
    base::enum_names<ErrorKind>({{ErrorKind::kBadLength, "bad_length"},
                                 {ErrorKind::kTooLarge, "too_large"},
                                 {ErrorKind::kBadOpMsg, "bad_op_msg"},
                                 {ErrorKind::kBadBson, "bad_bson"},
                                 {ErrorKind::kChecksum, "checksum"},
                                 {ErrorKind::kUnknownRequiredFlag, "unknown_required_flag"},
                                 {ErrorKind::kBadOpQuery, "bad_op_query"},
                                 {ErrorKind::kBadOpReply, "bad_op_reply"},
                                 {ErrorKind::kBadOpCompressed, "bad_op_compressed"},
                                 {ErrorKind::kBadCompressedData, "bad_compressed_data"},
                                 {ErrorKind::kDecompressionLimit, "decompression_limit"},
                                 {ErrorKind::kDecompressionSize, "decompression_size"},
                                 {ErrorKind::kTooManyInFlight, "too_many_in_flight"},
                                 {ErrorKind::kBadReply, "bad_reply"},
                                 {ErrorKind::kTruncatedFrame, "truncated_frame"},
                                 {ErrorKind::kFrameTimeout, "client_frame_timeout"},
                                 {ErrorKind::kIdleTimeout, "idle_timeout"},
                                 {ErrorKind::kSilent, "upstream_timeout"},
                                 {ErrorKind::kTlsHandshake, "tls_handshake"},
                                 {ErrorKind::kConnect, "connect"},
                                 {ErrorKind::kClosed, "closed"}},
                                "unknown");

constexpr auto kSourceNames = base::enum_names<ErrorSource>({{ErrorSource::kClient, "client"},
                                                             {ErrorSource::kUpstream, "upstream"},
                                                             {ErrorSource::kDocguard, "docguard"}},
                                                            "unknown");

}  // namespace

const char* name(ErrorKind kind) { return kKindNames.name(kind); }
const char* name(ErrorSource source) { return kSourceNames.name(source); }

const char* metric_label(const Error& error) {
  if (error.source != ErrorSource::kUpstream) return name(error.kind);
  switch (error.kind) {
    case ErrorKind::kConnect:
      return "connect";
    case ErrorKind::kClosed:
      return "closed";
    case ErrorKind::kFrameTimeout:
    case ErrorKind::kSilent:
      return "timeout";
    case ErrorKind::kTlsHandshake:
      return "tls";
    default:
      return "bad_reply";  // whatever made the reply unreadable (name(kind) in the log says)
  }
}

const char* log_name(const Error& error) {
  if (error.source == ErrorSource::kUpstream && error.kind == ErrorKind::kFrameTimeout) {
    return "upstream_frame_timeout";
  }
  if (error.source == ErrorSource::kUpstream && error.kind == ErrorKind::kSilent) {
    return "upstream_timeout";
  }
  return metric_label(error);
}

}  // namespace docguard::codec
