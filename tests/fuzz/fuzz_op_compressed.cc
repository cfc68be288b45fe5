// OP_COMPRESSED: decompression with bomb guards, then the inner message's parser.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "docguard/wire/op_compressed.h"
#include "docguard/wire/op_msg.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace docguard;
  std::vector<uint8_t> message(wire::kHeaderSize);
  message.insert(message.end(), data, data + size);
  wire::write_header(message.data(),
                     wire::MsgHeader{static_cast<int32_t>(message.size()), 1, 0,
                                     static_cast<int32_t>(wire::OpCode::kCompressed)});
  try {
    auto inner = wire::decompress_message(message, 1 << 20);
    if (inner.size() > (1u << 20)) __builtin_trap();
    if (wire::read_header(inner.data()).op_code == static_cast<int32_t>(wire::OpCode::kMsg)) {
      (void)wire::OpMsg::parse(inner);
    }
  } catch (const wire::ProtocolError&) {
  }
  return 0;
}
