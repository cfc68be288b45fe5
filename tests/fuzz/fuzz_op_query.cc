// Legacy OP_QUERY (handshake) and OP_REPLY parsing, plus the hello persona rewrite.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "docguard/proxy/handshake.h"
#include "docguard/wire/op_query.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace docguard;
  std::vector<uint8_t> message(wire::kHeaderSize);
  message.insert(message.end(), data, data + size);
  wire::write_header(message.data(), wire::MsgHeader{static_cast<int32_t>(message.size()), 1, 0,
                                                     static_cast<int32_t>(wire::OpCode::kQuery)});
  proxy::PersonaSettings persona{proxy::Persona::kReplicaSet, "rs", "127.0.0.1:1", 1 << 20};
  try {
    const auto q = wire::OpQuery::parse(message);
    (void)proxy::is_hello_command(q.query);
    (void)proxy::client_app_name(q.query);
    (void)proxy::supported_compressors(q.query);
  } catch (const wire::ProtocolError&) {
  }
  try {
    const auto r = wire::OpReply::parse(message);
    for (const auto& doc : r.documents) {
      auto out = proxy::rewrite_hello_reply(doc, {wire::Compressor::kZstd}, persona);
      // Structurally sound, like everything docguard relays (UTF-8 is the server's business).
      if (!wire::bson_structure_valid(out.reply.view(), nullptr)) __builtin_trap();
    }
  } catch (const wire::ProtocolError&) {
  }
  return 0;
}
