// Errors are typed, but dashboards and alerts match their metric labels as strings: each kind and
// source keeps the label it had, and each source's family is pre-created with the same labels.
#include "docguard/codec/error_kinds.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "docguard/codec/server_errors.h"

namespace docguard::codec {
namespace {

TEST(ErrorKinds, ClientErrorsKeepTheirLabels) {
  std::set<std::string> labels;
  for (ErrorKind kind : kProtocolErrorKinds) {
    labels.insert(metric_label({kind, ErrorSource::kClient}));
  }
  EXPECT_EQ(labels,
            (std::set<std::string>{"bad_length", "too_large", "bad_op_msg", "bad_bson", "checksum",
                                   "unknown_required_flag", "bad_op_query", "bad_op_compressed",
                                   "bad_compressed_data", "decompression_limit",
                                   "decompression_size", "truncated_frame", "client_frame_timeout",
                                   "idle_timeout", "tls_handshake"}));
  EXPECT_STREQ(metric_label({ErrorKind::kTooManyInFlight, ErrorSource::kClient}),
               "too_many_in_flight");
}

TEST(ErrorKinds, UpstreamErrorsKeepTheirLabels) {
  std::set<std::string> labels;
  for (const Error& error : kUpstreamErrors) labels.insert(metric_label(error));
  EXPECT_EQ(labels, (std::set<std::string>{"connect", "closed", "bad_reply", "timeout", "tls"}));
  // Whatever made a reply unreadable counts as bad_reply; both timeouts as timeout, and the log
  // says which.
  EXPECT_STREQ(metric_label({ErrorKind::kBadBson, ErrorSource::kUpstream}), "bad_reply");
  EXPECT_STREQ(metric_label({ErrorKind::kTooLarge, ErrorSource::kUpstream}), "bad_reply");
  EXPECT_STREQ(metric_label({ErrorKind::kFrameTimeout, ErrorSource::kUpstream}), "timeout");
  EXPECT_STREQ(log_name({ErrorKind::kFrameTimeout, ErrorSource::kUpstream}),
               "upstream_frame_timeout");
  EXPECT_STREQ(log_name({ErrorKind::kSilent, ErrorSource::kUpstream}), "upstream_timeout");
  EXPECT_STREQ(log_name({ErrorKind::kFrameTimeout, ErrorSource::kClient}), "client_frame_timeout");
  EXPECT_STREQ(name(ErrorSource::kDocguard), "docguard");
}

TEST(ServerErrors, NumbersAndNamesAreTheServers) {
  EXPECT_EQ(code_of(ServerError::kHostUnreachable), 6);
  EXPECT_EQ(code_of(ServerError::kShutdownInProgress), 91);
  EXPECT_EQ(code_of(ServerError::kDocumentValidationFailure), 121);
  EXPECT_EQ(code_of(ServerError::kFailedToSatisfyReadPreference), 133);
  EXPECT_EQ(code_of(ServerError::kNotWritablePrimary), 10107);
  EXPECT_STREQ(code_name(ServerError::kDocumentValidationFailure), "DocumentValidationFailure");
  EXPECT_STREQ(code_name(ServerError::kFailedToSatisfyReadPreference),
               "FailedToSatisfyReadPreference");
  EXPECT_STREQ(code_name(ServerError::kHostUnreachable), "HostUnreachable");
  for (const auto& e : kServerErrorNames.entries()) {
    EXPECT_EQ(kServerErrorNames.value(e.name), e.value) << e.name;  // no name twice
  }
}

}  // namespace
}  // namespace docguard::codec
