// Framing: arbitrary bytes in arbitrary read sizes, through the buffer the proxy reads into.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "docguard/codec/inbound_buffer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using docguard::codec::Bytes;
  if (size < 1) return 0;
  // First byte picks the read size, so the fuzzer explores partial-frame boundaries.
  const size_t chunk = static_cast<size_t>(data[0] % 32) + 1;
  docguard::codec::InboundBuffer in(1 << 20);
  try {
    for (size_t pos = 1; pos < size;) {
      auto space = in.writable();
      if (space.empty()) __builtin_trap();
      const size_t n = std::min({chunk, space.size(), size - pos});
      std::memcpy(space.data(), data + pos, n);
      in.commit(n);
      pos += n;
      for (Bytes m = in.next_message(); !m.empty(); m = in.next_message()) {
        if (m.size() < docguard::codec::kHeaderSize) __builtin_trap();
        if (static_cast<size_t>(docguard::codec::load_le32(m.data())) != m.size()) __builtin_trap();
      }
      if (in.pending() == 0) in.shrink();
    }
  } catch (const docguard::codec::ProtocolError&) {
  }
  return 0;
}
