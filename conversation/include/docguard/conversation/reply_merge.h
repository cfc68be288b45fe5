// The reply side of a rewritten request (request_plan.h): the upstream reply's statement
// indices mapped back to the client's, with docguard's own refusals merged in.
#pragma once

#include <cstdint>
#include <vector>

#include "docguard/codec/op_msg.h"
#include "docguard/conversation/request_plan.h"

namespace docguard::conversation {

// The client's reply for a rewritten request, from the upstream reply (OP_MSG, already
// decompressed). Returns an empty vector when the upstream reply should be forwarded
// unchanged (command errors with ok: 0, or replies that are not write results).
std::vector<uint8_t> merge_reply(const PendingMerge& merge, const codec::OpMsg& upstream_reply,
                                 int32_t response_to);

}  // namespace docguard::conversation
