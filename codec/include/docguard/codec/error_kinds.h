// Every error docguard counts, declared once: what went wrong (ErrorKind) and where it came from
// (ErrorSource), so the proxy routes each to its metric family by its source rather than by
// spelling. The codec throws ProtocolError with a kind; the proxy, which knows the direction,
// makes it an Error. Errors from the client are counted in docguard_protocol_errors_total{kind},
// from the upstream in docguard_upstream_errors_total{kind}; both families pre-create every
// label below, and the metrics table in docs/metrics.md names them. The labels are what dashboards
// and alerts match: a kind's label never changes.
#pragma once

#include <array>
#include <cstdint>

namespace docguard::codec {

enum class ErrorKind : uint8_t {
  // A message docguard could not accept (from the client; from the upstream: a bad reply).
  kBadLength,
  kTooLarge,
  kBadOpMsg,
  kBadBson,
  kChecksum,
  kUnknownRequiredFlag,
  kBadOpQuery,
  kBadOpReply,
  kBadOpCompressed,
  kBadCompressedData,
  kDecompressionLimit,
  kDecompressionSize,
  kTooManyInFlight,  // a client pipelining past Conversation::kMaxAwaitingReplies
  kBadReply,         // a reply docguard rewrites is not valid BSON throughout (the hello's)
  // A connection's life.
  kTruncatedFrame,
  kFrameTimeout,  // a message stalled in the middle
  kIdleTimeout,   // the client sent nothing for idle_timeout
  kSilent,        // requests in flight and the upstream silent for upstream_timeout
  kTlsHandshake,
  kConnect,
  kClosed,
};

// Who the error came from. docguard's own failures (an unexpected exception) are logged, not
// counted.
enum class ErrorSource : uint8_t { kClient, kUpstream, kDocguard };

struct Error {
  ErrorKind kind;
  ErrorSource source;
  friend constexpr bool operator==(const Error&, const Error&) = default;
};

// The kind's name, as a client error's label: "bad_length", "client_frame_timeout", ...
const char* name(ErrorKind kind);
const char* name(ErrorSource source);
// The label of `error` in its source's metric family. Every upstream message error counts as
// "bad_reply", and both upstream timeouts as "timeout".
const char* metric_label(const Error& error);
// The error in a log line: the label, except for the upstream timeouts, which say which one
// ("upstream_frame_timeout", "upstream_timeout").
const char* log_name(const Error& error);

// Counted as protocol errors and pre-created as labels (too_many_in_flight is counted when it
// happens, not pre-created).
inline constexpr std::array<ErrorKind, 15> kProtocolErrorKinds = {
    ErrorKind::kBadLength,         ErrorKind::kTooLarge,
    ErrorKind::kBadOpMsg,          ErrorKind::kBadBson,
    ErrorKind::kChecksum,          ErrorKind::kUnknownRequiredFlag,
    ErrorKind::kBadOpQuery,        ErrorKind::kBadOpCompressed,
    ErrorKind::kBadCompressedData, ErrorKind::kDecompressionLimit,
    ErrorKind::kDecompressionSize, ErrorKind::kTruncatedFrame,
    ErrorKind::kFrameTimeout,      ErrorKind::kIdleTimeout,
    ErrorKind::kTlsHandshake};
// The upstream family's labels, one Error for each.
inline constexpr std::array<Error, 5> kUpstreamErrors = {
    Error{ErrorKind::kConnect, ErrorSource::kUpstream},
    Error{ErrorKind::kClosed, ErrorSource::kUpstream},
    Error{ErrorKind::kBadReply, ErrorSource::kUpstream},
    Error{ErrorKind::kSilent, ErrorSource::kUpstream},
    Error{ErrorKind::kTlsHandshake, ErrorSource::kUpstream}};

}  // namespace docguard::codec
