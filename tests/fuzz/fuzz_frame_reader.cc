// Framing: arbitrary bytes in arbitrary chunk sizes.
#include <cstddef>
#include <cstdint>

#include "docguard/codec/frame_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  // First byte picks the chunk size, so the fuzzer explores partial-frame boundaries.
  const size_t chunk = static_cast<size_t>(data[0] % 32) + 1;
  docguard::codec::FrameReader reader(1 << 20);
  try {
    for (size_t pos = 1; pos < size; pos += chunk) {
      const size_t n = pos + chunk <= size ? chunk : size - pos;
      reader.feed(docguard::codec::Bytes{data + pos, n});
      while (auto m = reader.next()) {
        if (m->size() < docguard::codec::kHeaderSize) __builtin_trap();
      }
    }
  } catch (const docguard::codec::ProtocolError&) {
  }
  return 0;
}
