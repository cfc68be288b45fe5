// Private to the conversation library: the query guardrail's one rewrite of a client's request,
// adding maxTimeMS to a command that carries none (rules::Verdict::max_time_ms).
#pragma once

#include <cstdint>
#include <vector>

#include "docguard/codec/op_msg.h"

namespace docguard::conversation::detail {

// `request` with maxTimeMS: `ms` appended to its body; its sequences, requestID and flags are
// kept, except the checksum, which is left out (the body changed; OP_MSG makes it optional).
std::vector<uint8_t> with_max_time(const codec::OpMsg& request, int64_t ms);

}  // namespace docguard::conversation::detail
