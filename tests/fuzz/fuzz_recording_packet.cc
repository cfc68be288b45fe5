// A recording's packet read back: any bytes, given as a whole packet, either read to a header
// and a message that lie inside them or are refused, never a crash; a packet read is written
// again to the same bytes (a NUL-free session text round-trips).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "docguard/codec/recording_packet.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace docguard;
  const codec::Bytes packet(data, size);
  const auto view = codec::parse_packet(packet);
  if (!view) return 0;
  std::vector<uint8_t> again;
  codec::append_packet(again, view->header, view->message);
  if (!std::equal(again.begin(), again.end(), packet.begin(), packet.end())) __builtin_trap();
  return 0;
}
