// Legacy OP_QUERY (handshake) and OP_REPLY parsing, plus the hello persona rewrite.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "docguard/codec/command_view.h"
#include "docguard/codec/op_query.h"
#include "docguard/conversation/handshake.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace docguard;
  std::vector<uint8_t> message(codec::kHeaderSize);
  message.insert(message.end(), data, data + size);
  codec::write_header(message.data(), codec::MsgHeader{static_cast<int32_t>(message.size()), 1, 0,
                                                       codec::OpCode::kQuery});
  conversation::PersonaSettings persona{conversation::Persona::kReplicaSet, "rs", "127.0.0.1:1",
                                        1 << 20};
  try {
    const auto q = codec::OpQuery::parse(message);
    (void)codec::is_hello_command(q.query);
    (void)conversation::client_app_name(q.query);
    (void)conversation::supported_compressors(q.query);
  } catch (const codec::ProtocolError&) {
  }
  try {
    const auto r = codec::OpReply::parse(message);
    for (const auto& doc : r.documents) {
      auto out = conversation::rewrite_hello_reply(doc, {codec::Compressor::kZstd}, persona);
      // Structurally sound, like everything docguard relays (UTF-8 is the server's business).
      if (!codec::bson_structure_valid(out.reply.view(), nullptr)) __builtin_trap();
    }
  } catch (const codec::ProtocolError&) {
  }
  return 0;
}
