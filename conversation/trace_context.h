// Private to the conversation library: a request's trace context (OP_MSG section kind 3) for an
// upstream that cannot take it. Servers below kTraceContextMinWireVersion close the connection
// on the section (so does FerretDB 1.x); drivers never send it to them, but a client that
// learned a newer server's version elsewhere, or a hand-made one, may.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "docguard/codec/op_msg.h"

namespace docguard::conversation::detail {

// Whether an upstream that announced `max_wire_version` in its hello takes section kind 3. An
// upstream docguard has not seen a hello from is given the client's bytes as they are.
inline bool upstream_takes_trace_context(std::optional<int64_t> max_wire_version) {
  return !max_wire_version || *max_wire_version >= codec::kTraceContextMinWireVersion;
}

// `request` without its trace context: body and sequences as sent, requestID and the flags the
// upstream may see kept, no checksum (OP_MSG makes it optional).
std::vector<uint8_t> without_trace_context(const codec::OpMsg& request);

}  // namespace docguard::conversation::detail
