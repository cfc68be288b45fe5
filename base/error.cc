#include "docguard/base/error.h"

#include "docguard/base/enum_names.h"

namespace docguard::base {
namespace {

// The protocol kinds' names are metric labels (see error.h): never rename one.
constexpr auto kKindNames =
    enum_names<ErrorKind>({{ErrorKind::kBadLength, "bad_length"},
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
                           {ErrorKind::kClosed, "closed"},
                           {ErrorKind::kNetwork, "network"},
                           {ErrorKind::kBadInput, "bad_input"},
                           {ErrorKind::kTimeout, "timeout"},
                           {ErrorKind::kNotAuthorized, "not_authorized"},
                           {ErrorKind::kNotSupported, "not_supported"},
                           {ErrorKind::kNotFound, "not_found"},
                           {ErrorKind::kRefused, "refused"},
                           {ErrorKind::kStopped, "stopped"},
                           {ErrorKind::kIo, "io"},
                           {ErrorKind::kConfiguration, "configuration"},
                           {ErrorKind::kInternal, "internal"}},
                          "unknown");

constexpr auto kSourceNames =
    enum_names<ErrorSource>({{ErrorSource::kClient, "client"},
                             {ErrorSource::kUpstream, "upstream"},
                             {ErrorSource::kDocguard, "docguard"},
                             {ErrorSource::kConfiguration, "configuration"}},
                            "unknown");

}  // namespace

const char* name(ErrorKind kind) { return kKindNames.name(kind); }
const char* name(ErrorSource source) { return kSourceNames.name(source); }

}  // namespace docguard::base
