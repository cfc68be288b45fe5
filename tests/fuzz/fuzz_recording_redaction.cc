// What a traffic recording keeps of a message: any bytes, as a request or as a reply (the first
// byte picks which, and whether the reply answers an authentication step), must come out as one
// whole message of the declared length, an OP_MSG marker when unreadable, never a crash.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "docguard/codec/op_msg.h"
#include "docguard/codec/recording_redaction.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace docguard;
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  const codec::Bytes message(data + 1, size - 1);
  const auto out = (mode & 1) != 0 ? codec::redact_reply(message, (mode & 2) != 0, 1 << 20)
                                   : codec::redact_request(message, 1 << 20);
  if (out.bytes.size() < codec::kHeaderSize) __builtin_trap();
  const codec::MsgHeader header = codec::read_header(out.bytes.data());
  if (static_cast<size_t>(header.message_length) != out.bytes.size()) __builtin_trap();
  if (out.marker) (void)codec::OpMsg::parse(out.bytes);  // a marker is always a valid OP_MSG
  return 0;
}
