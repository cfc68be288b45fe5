#include "docguard/codec/recording_packet.h"

#include <algorithm>
#include <string>

namespace docguard::codec {
namespace {

void put_le(std::vector<uint8_t>& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

uint64_t load_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

void append_packet(std::vector<uint8_t>& out, const PacketHeader& header, Bytes message) {
  const size_t start = out.size();
  put_le(out, 0, 4);  // the size, known at the end
  out.push_back(static_cast<uint8_t>(header.event));
  put_le(out, header.connection, 8);
  for (const char c : header.session) {
    out.push_back(c == '\0' ? static_cast<uint8_t>('?') : static_cast<uint8_t>(c));
  }
  out.push_back(0);
  put_le(out, header.offset_micros, 8);
  put_le(out, header.order, 8);
  out.insert(out.end(), message.begin(), message.end());
  store_le32(out.data() + start, static_cast<int32_t>(out.size() - start));
}

base::Expected<PacketView> parse_packet(Bytes packet) {
  if (packet.size() < kMinPacketBytes) return base::bad_input("a packet shorter than its fields");
  const auto size = static_cast<uint32_t>(load_le32(packet.data()));
  if (size != packet.size()) {
    return base::bad_input("a packet whose size field says " + std::to_string(size) +
                           " bytes, not " + std::to_string(packet.size()));
  }
  if (packet[4] > static_cast<uint8_t>(RecordedEvent::kSessionEnd)) {
    return base::bad_input("a packet of unknown event " + std::to_string(packet[4]));
  }
  PacketView out;
  out.header.event = static_cast<RecordedEvent>(packet[4]);
  out.header.connection = load_le64(packet.data() + 5);
  const auto text = packet.subspan(13);
  const auto nul = std::find(text.begin(), text.end(), uint8_t{0});
  const auto text_size = static_cast<size_t>(nul - text.begin());
  if (nul == text.end() || text.size() - text_size - 1 < 16) {
    return base::bad_input("a packet whose session text has no end before its offset and order");
  }
  out.header.session = {reinterpret_cast<const char*>(text.data()), text_size};
  const uint8_t* after = text.data() + text_size + 1;
  out.header.offset_micros = load_le64(after);
  out.header.order = load_le64(after + 8);
  out.message = text.subspan(text_size + 1 + 16);
  return out;
}

}  // namespace docguard::codec
