#include <string>

#include "docguard/base/enum_names.h"
#include "docguard/codec/error_kinds.h"
#include "docguard/codec/message.h"

namespace docguard::codec {

MsgHeader read_header(const uint8_t* data) {
  return MsgHeader{load_le32(data), load_le32(data + 4), load_le32(data + 8),
                   static_cast<OpCode>(load_le32(data + 12))};
}

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

namespace {

constexpr auto kOpCodeNames = base::enum_names<OpCode>({{OpCode::kReply, "OP_REPLY"},
                                                        {OpCode::kUpdate, "OP_UPDATE"},
                                                        {OpCode::kInsert, "OP_INSERT"},
                                                        {OpCode::kQuery, "OP_QUERY"},
                                                        {OpCode::kGetMore, "OP_GET_MORE"},
                                                        {OpCode::kDelete, "OP_DELETE"},
                                                        {OpCode::kKillCursors, "OP_KILL_CURSORS"},
                                                        {OpCode::kCompressed, "OP_COMPRESSED"},
                                                        {OpCode::kMsg, "OP_MSG"}},
                                                       "unknown");

}  // namespace

const char* op_code_name(OpCode op_code) { return kOpCodeNames.name(op_code); }

}  // namespace docguard::codec
