// docguard's one error type: what went wrong (ErrorKind), who it came from (ErrorSource), whether
// trying again can help, and a sentence the user can act on. Every layer reports its failures
// with it, so a caller decides by kind ("not authorized" is not "timed out") rather than by
// comparing texts or codes, and the metric families count by kind and source.
//
// The protocol kinds are the labels of docguard_protocol_errors_total and
// docguard_upstream_errors_total (codec's metric_label() maps a kind and source to its family's
// label): dashboards and alerts match those names, so a listed kind's name never changes.
#pragma once

#include <cstdint>
#include <string>

namespace docguard::base {

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
  kBadReply,         // a reply docguard must read is not what the protocol promises
  // A connection's life.
  kTruncatedFrame,
  kFrameTimeout,  // a message stalled in the middle
  kIdleTimeout,   // the client sent nothing for idle_timeout
  kSilent,        // requests in flight and the upstream silent for upstream_timeout
  kTlsHandshake,
  kConnect,  // no connection could be made: refused, no server selectable, a name not resolved
  kClosed,
  kNetwork,  // an established connection failed or timed out in the middle of a command
  // What any layer may report.
  kBadInput,       // an argument, a file's content or a document docguard cannot use
  kTimeout,        // an operation ran out of its time
  kNotAuthorized,  // the server refused the credentials or the rights
  kNotSupported,   // the server (or docguard) lacks the command, stage or feature
  kNotFound,       // what was named does not exist
  kRefused,        // the server refused a command for another reason (its code says which)
  kStopped,        // docguard was asked to stop before the operation finished
  kIo,             // a file or directory could not be read or written
  kConfiguration,  // a setting is wrong: the file, a flag, the URI
  kInternal,       // docguard's own failure: a bug
};

// Who the error came from: the client (its messages), the upstream (its replies, its
// connections), docguard itself, or the configuration the operator wrote.
enum class ErrorSource : uint8_t { kClient, kUpstream, kDocguard, kConfiguration };

// The kind's name, the label of a client error: "bad_length", "client_frame_timeout", ...
const char* name(ErrorKind kind);
const char* name(ErrorSource source);

// Whether trying the same thing again, unchanged, can succeed: true for what a network or a
// busy server causes (timeouts, closed or failed connections), false for what needs a change
// (bad input, rights, configuration, a missing feature) and for docguard's own bugs.
constexpr bool retry_can_help_by_default(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kFrameTimeout:
    case ErrorKind::kIdleTimeout:
    case ErrorKind::kSilent:
    case ErrorKind::kConnect:
    case ErrorKind::kClosed:
    case ErrorKind::kNetwork:
    case ErrorKind::kTimeout:
      return true;
    default:
      return false;
  }
}

// An aggregate, so `{kind, source}` and `{kind, source, message}` make one.
struct Error {
  ErrorKind kind = ErrorKind::kInternal;
  ErrorSource source = ErrorSource::kDocguard;
  std::string message = {};  // a complete sentence for logs and --check-config
  // What the error is about, as the user wrote it: a URI option, a host, a file (empty when
  // nothing in particular), so a message can point at it.
  std::string subject = {};
  // The server's error code when the server refused a command (13 Unauthorized, 238
  // NotImplemented, 50 MaxTimeMSExpired, ...); 0 otherwise.
  int32_t code = 0;
  bool retry_can_help = retry_can_help_by_default(kind);

  friend bool operator==(const Error&, const Error&) = default;
};

// What cannot be used as given (a document, a file's content, an argument), in one sentence.
inline Error bad_input(std::string message, ErrorSource source = ErrorSource::kDocguard) {
  return Error{ErrorKind::kBadInput, source, std::move(message)};
}

}  // namespace docguard::base
