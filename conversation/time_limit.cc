#include "time_limit.h"

#include <bson/bson.h>

#include <limits>

#include "docguard/codec/bson_elements.h"

namespace docguard::conversation::detail {

std::vector<uint8_t> with_max_time(const codec::OpMsg& request, int64_t ms) {
  codec::OwnedBson body;
  for (codec::BsonElements it(request.body); it.next();) it.append_to(body.get(), it.key);
  // int32 when it fits, as drivers send it (the configured bound is at most 24 h).
  if (ms <= std::numeric_limits<int32_t>::max()) {
    BSON_APPEND_INT32(body.get(), "maxTimeMS", static_cast<int32_t>(ms));
  } else {
    BSON_APPEND_INT64(body.get(), "maxTimeMS", ms);
  }
  codec::OpMsgBuilder builder(request.header.request_id, request.header.response_to,
                              request.flags & ~codec::op_msg_flags::kChecksumPresent);
  builder.body(body.bytes());
  for (const auto& seq : request.sequences) builder.sequence(seq.identifier, seq.documents);
  builder.trace_context(request.trace_context);
  return builder.finish();
}

}  // namespace docguard::conversation::detail
