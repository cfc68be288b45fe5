// The errors docguard counts, routed to their metric family by their source rather than by
// spelling. The kinds and sources are base's (docguard/base/error.h); the codec throws
// ProtocolError with a kind, and the proxy, which knows the direction, makes it an Error. Errors
// from the client are counted in docguard_protocol_errors_total{kind}, from the upstream in
// docguard_upstream_errors_total{kind}; both families pre-create every label below, and the
// metrics table in docs/metrics.md names them. The labels are what dashboards and alerts match:
// a kind's label never changes.
#pragma once

#include <array>

#include "docguard/base/error.h"

namespace docguard::codec {

using base::Error;
using base::ErrorKind;
using base::ErrorSource;
// name(ErrorKind), name(ErrorSource): the kind's name is a client error's label.
using base::name;

// The label of `error` in its source's metric family. Every upstream message error counts as
// "bad_reply", and both upstream timeouts as "timeout". Errors of docguard's own (an unexpected
// exception) or of the configuration are logged, not counted; their label is the kind's name.
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
// Not constexpr: an Error holds strings, which g++ 12 cannot keep in a constant under ASan.
inline const std::array<Error, 5> kUpstreamErrors = {
    Error{ErrorKind::kConnect, ErrorSource::kUpstream},
    Error{ErrorKind::kClosed, ErrorSource::kUpstream},
    Error{ErrorKind::kBadReply, ErrorSource::kUpstream},
    Error{ErrorKind::kSilent, ErrorSource::kUpstream},
    Error{ErrorKind::kTlsHandshake, ErrorSource::kUpstream}};

}  // namespace docguard::codec
