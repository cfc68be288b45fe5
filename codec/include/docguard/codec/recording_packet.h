// One packet of a traffic recording, in the layout the MongoDB server's own traffic recorder
// writes and its replay tool reads (docs/recording.md): little-endian u32 size of the whole
// packet, u8 event, u64 connection id, the session text and a NUL, u64 offset in microseconds,
// u64 order, then the wire message (empty for session events). The recorder writes packets and
// the offline tools read them back through this one definition of the layout.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "docguard/base/expected.h"
#include "docguard/codec/message.h"

namespace docguard::codec {

// The packet's kind, as the server's recorder numbers it (one byte on disk).
enum class RecordedEvent : uint8_t {
  kRequest = 0,
  kResponse = 1,
  kSessionStart = 2,
  kSessionEnd = 3
};

struct PacketHeader {
  RecordedEvent event = RecordedEvent::kRequest;
  uint64_t connection = 0;     // the connection's id, the same for all its packets
  std::string_view session;    // the connection's description (no NUL: it is terminated by one)
  uint64_t offset_micros = 0;  // since the recording started
  uint64_t order = 0;          // the packet's place in the whole recording, from 1
};

// The size field and the fixed fields after it, with an empty session text.
inline constexpr uint32_t kMinPacketBytes = 4 + 1 + 8 + 1 + 8 + 8;

// Appends one packet. A NUL inside the session text is written as '?': the text ends at the
// first NUL on reading, and one inside would shift every field after it.
void append_packet(std::vector<uint8_t>& out, const PacketHeader& header, Bytes message);

// A packet read back: its header (the session text points into the packet) and its message.
struct PacketView {
  PacketHeader header;
  Bytes message;
};

// Reads one whole packet (`packet` is exactly its size field's bytes long). An error says what
// does not fit the layout: the size field disagrees, an unknown event, no end to the session.
base::Expected<PacketView> parse_packet(Bytes packet);

}  // namespace docguard::codec
