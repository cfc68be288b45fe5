#include "trace_context.h"

namespace docguard::conversation::detail {

std::vector<uint8_t> without_trace_context(const codec::OpMsg& request) {
  codec::OpMsgBuilder builder(
      request.header.request_id, request.header.response_to,
      request.flags & (codec::op_msg_flags::kRequiredMask | codec::op_msg_flags::kKnownMask) &
          ~codec::op_msg_flags::kChecksumPresent);
  builder.body(request.body.bytes());
  for (const auto& seq : request.sequences) builder.sequence(seq.identifier, seq.documents);
  return builder.finish();
}

}  // namespace docguard::conversation::detail
