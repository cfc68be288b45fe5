#include "docguard/codec/op_query.h"

#include "docguard/codec/error_kinds.h"

namespace docguard::codec {

OpQuery OpQuery::parse(Bytes message) {
  OpQuery q;
  if (message.size() < kHeaderSize + 4 + 1 + 8 + 5) {
    throw ProtocolError(ErrorKind::kBadOpQuery, "OP_QUERY too short");
  }
  q.header = read_header(message.data());
  size_t pos = kHeaderSize;
  q.flags = load_le32(message.data() + pos);
  pos += 4;
  size_t name_end = pos;
  while (name_end < message.size() && message[name_end] != 0) ++name_end;
  if (name_end >= message.size()) {
    throw ProtocolError(ErrorKind::kBadOpQuery,
                        "OP_QUERY fullCollectionName is not NUL-terminated");
  }
  q.full_collection_name =
      std::string_view(reinterpret_cast<const char*>(message.data() + pos), name_end - pos);
  pos = name_end + 1;
  if (message.size() - pos < 8) throw ProtocolError(ErrorKind::kBadOpQuery, "OP_QUERY truncated");
  q.number_to_skip = load_le32(message.data() + pos);
  q.number_to_return = load_le32(message.data() + pos + 4);
  pos += 8;
  q.query = checked_bson(message.subspan(pos));
  pos += q.query.size;
  if (pos < message.size()) {
    q.return_fields_selector = checked_bson(message.subspan(pos));
    pos += q.return_fields_selector.size;
  }
  if (pos != message.size())
    throw ProtocolError(ErrorKind::kBadOpQuery, "OP_QUERY has trailing bytes");
  return q;
}

OpReply OpReply::parse(Bytes message) {
  OpReply r;
  constexpr size_t kFixed = kHeaderSize + 4 + 8 + 4 + 4;
  if (message.size() < kFixed) throw ProtocolError(ErrorKind::kBadOpReply, "OP_REPLY too short");
  r.header = read_header(message.data());
  r.response_flags = load_le32(message.data() + kHeaderSize);
  r.cursor_id = static_cast<int64_t>(static_cast<uint32_t>(load_le32(message.data() + 20))) |
                (static_cast<int64_t>(load_le32(message.data() + 24)) << 32);
  r.starting_from = load_le32(message.data() + 28);
  r.number_returned = load_le32(message.data() + 32);
  size_t pos = kFixed;
  while (pos < message.size()) {
    BsonView d = checked_bson(message.subspan(pos));
    r.documents.push_back(d);
    pos += d.size;
  }
  return r;
}

std::vector<uint8_t> build_op_reply(int32_t request_id, int32_t response_to, Bytes document,
                                    int32_t response_flags) {
  std::vector<uint8_t> out(kHeaderSize + 20);
  const auto total = static_cast<int32_t>(out.size() + document.size());
  write_header(out.data(), MsgHeader{total, request_id, response_to, OpCode::kReply});
  store_le32(out.data() + kHeaderSize, response_flags);
  store_le32(out.data() + 20, 0);  // cursorID low
  store_le32(out.data() + 24, 0);  // cursorID high
  store_le32(out.data() + 28, 0);  // startingFrom
  store_le32(out.data() + 32, 1);  // numberReturned
  out.insert(out.end(), document.begin(), document.end());
  return out;
}

}  // namespace docguard::codec
