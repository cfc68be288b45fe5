#include <string>

#include "docguard/codec/error_kinds.h"
#include "docguard/codec/message.h"

namespace docguard::codec {

void write_header(uint8_t* data, const MsgHeader& header) {
  store_le32(data, header.message_length);
  store_le32(data + 4, header.request_id);
  store_le32(data + 8, header.response_to);
  store_le32(data + 12, static_cast<int32_t>(header.op_code));
}

void check_message_length(const MsgHeader& header, uint32_t max_message_bytes) {
  if (header.message_length < static_cast<int32_t>(kHeaderSize)) {
    throw ProtocolError(ErrorKind::kBadLength, "messageLength " +
                                                   std::to_string(header.message_length) +
                                                   " is smaller than the 16-byte header");
  }
  if (static_cast<uint32_t>(header.message_length) > max_message_bytes) {
    throw ProtocolError(ErrorKind::kTooLarge, "messageLength " +
                                                  std::to_string(header.message_length) +
                                                  " exceeds the limit of " +
                                                  std::to_string(max_message_bytes) + " bytes");
  }
}

}  // namespace docguard::codec
