#pragma once

#include <cstdint>

#include "docguard/codec/message.h"

namespace docguard::codec {

// CRC-32C (Castagnoli), as used by OP_MSG checksums. Uses SSE4.2 when the CPU has it.
uint32_t crc32c(Bytes data, uint32_t crc = 0);

}  // namespace docguard::codec
