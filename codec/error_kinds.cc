#include "docguard/codec/error_kinds.h"

namespace docguard::codec {

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
