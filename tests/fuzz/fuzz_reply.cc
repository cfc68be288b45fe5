// Upstream replies through Conversation::on_reply: decompression, the failover signals, and the
// rewrite of the reply to a hello, on arbitrary bytes presented as a whole reply (the header's
// length is patched to match). The first byte picks the reply's opcode and which request it
// answers, so the rewrites run as often as the plain relay.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "docguard/codec/op_msg.h"
#include "docguard/conversation/conversation.h"
#include "docguard/conversation/reply_signals.h"
#include "docguard/rules/engine.h"
#include "docguard/settings/yaml_settings.h"

namespace {

using namespace docguard;

struct Host : conversation::ConversationHost {
  int32_t new_request_id() override { return -1; }
};

rules::Engine& engine() {
  static rules::Engine e(settings::parse_rules(YAML::Load("mode: warn\n"), "fuzz"), nullptr,
                         nullptr);
  return e;
}

void put32(std::vector<uint8_t>& out, int32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<uint8_t>(static_cast<uint32_t>(v) >> (8 * i)));
}

std::vector<uint8_t> frame(codec::OpCode op, int32_t request_id, int32_t response_to,
                           const uint8_t* data, size_t size) {
  std::vector<uint8_t> message(codec::kHeaderSize);
  message.insert(message.end(), data, data + size);
  codec::write_header(message.data(), codec::MsgHeader{static_cast<int32_t>(message.size()),
                                                       request_id, response_to, op});
  return message;
}

// A driver's handshake, as OP_MSG hello or legacy OP_QUERY isMaster, with requestID 7.
std::vector<uint8_t> hello_request(bool legacy) {
  codec::OwnedBson doc;
  BSON_APPEND_INT32(doc.get(), legacy ? "isMaster" : "hello", 1);
  if (!legacy) {
    BSON_APPEND_UTF8(doc.get(), "$db", "admin");
    return codec::OpMsgBuilder(7, 0).body(doc.get()).finish();
  }
  std::vector<uint8_t> body;
  put32(body, 0);
  const std::string ns = "admin.$cmd";
  body.insert(body.end(), ns.begin(), ns.end());
  body.push_back(0);
  put32(body, 0);
  put32(body, -1);
  const auto bytes = doc.bytes();
  body.insert(body.end(), bytes.begin(), bytes.end());
  return frame(codec::OpCode::kQuery, 7, 0, body.data(), body.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const conversation::ConversationSettings settings;
  static const std::vector<uint8_t> hello = hello_request(false);
  static const std::vector<uint8_t> legacy_hello = hello_request(true);
  const uint8_t choice = data[0];
  static constexpr codec::OpCode kOps[] = {codec::OpCode::kMsg, codec::OpCode::kReply,
                                           codec::OpCode::kCompressed, codec::OpCode::kMsg};
  const auto reply = frame(kOps[choice & 3], 9, 7, data + 1, size - 1);
  (void)conversation::read_reply_signals(reply);
  Host host;
  conversation::Conversation conv(engine(), settings, "fuzz", host);
  try {
    if ((choice & 4) != 0) conv.on_request((choice & 8) != 0 ? legacy_hello : hello);
    const auto out = conv.on_reply(reply);
    if (!out.drop && out.bytes.data() != reply.data() && out.bytes.size() >= codec::kHeaderSize) {
      // A rewritten reply is docguard's own message: it must frame as it says.
      if (codec::read_header(out.bytes.data()).message_length !=
          static_cast<int32_t>(out.bytes.size())) {
        __builtin_trap();
      }
    }
  } catch (const codec::ProtocolError&) {
  }
  return 0;
}
