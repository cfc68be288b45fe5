// The server error codes docguard reads or answers with, named once: error documents carry the
// number and its codeName from this table, and code that tests a reply's code names the error
// instead of repeating a number. Numbers and names are the server's: drivers match on both.
#pragma once

#include <cstdint>

#include "docguard/base/enum_names.h"

namespace docguard::codec {

enum class ServerError : int32_t {
  kHostUnreachable = 6,
  kUnauthorized = 13,
  kAuthenticationFailed = 18,
  kMaxTimeMSExpired = 50,
  kCommandNotFound = 59,
  kNetworkTimeout = 89,
  kShutdownInProgress = 91,
  kCommandNotSupported = 115,
  kDocumentValidationFailure = 121,
  kFailedToSatisfyReadPreference = 133,
  kPrimarySteppedDown = 189,
  kNetworkInterfaceExceededTimeLimit = 202,
  kNotImplemented = 238,
  kExceededTimeLimit = 262,
  kNoQueryExecutionPlans = 291,
  kNotWritablePrimary = 10107,
  kDuplicateKey = 11000,
  kInterruptedAtShutdown = 11600,
  kInterruptedDueToReplStateChange = 11602,
  kNotPrimaryNoSecondaryOk = 13435,
  kNotPrimaryOrSecondary = 13436,
  // Aggregation's "unrecognized pipeline stage" and "unknown field in a stage": the server
  // names them after their number only.
  kUnrecognizedPipelineStage = 40324,
  kUnknownStageField = 40415,
};

// The codeName of each code, as the server spells it in error documents.
inline constexpr auto kServerErrorNames = base::enum_names<ServerError>(
    {{ServerError::kHostUnreachable, "HostUnreachable"},
     {ServerError::kUnauthorized, "Unauthorized"},
     {ServerError::kAuthenticationFailed, "AuthenticationFailed"},
     {ServerError::kMaxTimeMSExpired, "MaxTimeMSExpired"},
     {ServerError::kCommandNotFound, "CommandNotFound"},
     {ServerError::kNetworkTimeout, "NetworkTimeout"},
     {ServerError::kShutdownInProgress, "ShutdownInProgress"},
     {ServerError::kCommandNotSupported, "CommandNotSupported"},
     {ServerError::kDocumentValidationFailure, "DocumentValidationFailure"},
     {ServerError::kFailedToSatisfyReadPreference, "FailedToSatisfyReadPreference"},
     {ServerError::kPrimarySteppedDown, "PrimarySteppedDown"},
     {ServerError::kNetworkInterfaceExceededTimeLimit, "NetworkInterfaceExceededTimeLimit"},
     {ServerError::kNotImplemented, "NotImplemented"},
     {ServerError::kExceededTimeLimit, "ExceededTimeLimit"},
     {ServerError::kNoQueryExecutionPlans, "NoQueryExecutionPlans"},
     {ServerError::kNotWritablePrimary, "NotWritablePrimary"},
     {ServerError::kDuplicateKey, "DuplicateKey"},
     {ServerError::kInterruptedAtShutdown, "InterruptedAtShutdown"},
     {ServerError::kInterruptedDueToReplStateChange, "InterruptedDueToReplStateChange"},
     {ServerError::kNotPrimaryNoSecondaryOk, "NotPrimaryNoSecondaryOk"},
     {ServerError::kNotPrimaryOrSecondary, "NotPrimaryOrSecondary"},
     {ServerError::kUnrecognizedPipelineStage, "Location40324"},
     {ServerError::kUnknownStageField, "Location40415"}},
    "UnknownError");

constexpr int32_t code_of(ServerError e) { return static_cast<int32_t>(e); }
constexpr const char* code_name(ServerError e) { return kServerErrorNames.name(e); }

// Whether `code` (a reply's number) is `e`.
constexpr bool is(int32_t code, ServerError e) { return code == code_of(e); }

// The codes after which a driver considers the server's role changed: the SDAM "not writable
// primary" and "node is recovering" errors. A reply carrying one sends the driver to another
// server, and the session pinned to this one follows.
constexpr bool is_state_change(int32_t code) {
  switch (static_cast<ServerError>(code)) {
    case ServerError::kNotWritablePrimary:
    case ServerError::kNotPrimaryNoSecondaryOk:
    case ServerError::kNotPrimaryOrSecondary:
    case ServerError::kPrimarySteppedDown:
    case ServerError::kShutdownInProgress:
    case ServerError::kInterruptedDueToReplStateChange:
      return true;
    default:
      return false;
  }
}

}  // namespace docguard::codec
