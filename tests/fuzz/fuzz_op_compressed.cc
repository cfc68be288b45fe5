// OP_COMPRESSED: decompression with bomb guards, then the inner message's parser.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "docguard/codec/op_compressed.h"
#include "docguard/codec/op_msg.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace docguard;
  std::vector<uint8_t> message(codec::kHeaderSize);
  message.insert(message.end(), data, data + size);
  codec::write_header(message.data(), codec::MsgHeader{static_cast<int32_t>(message.size()), 1, 0,
                                                       codec::OpCode::kCompressed});
  try {
    auto inner = codec::decompress_message(message, 1 << 20);
    if (inner.size() > (1u << 20)) __builtin_trap();
    if (codec::read_header(inner.data()).op_code == codec::OpCode::kMsg) {
      (void)codec::OpMsg::parse(inner);
    }
  } catch (const codec::ProtocolError&) {
  }
  return 0;
}
