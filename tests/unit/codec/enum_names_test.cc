#include <gtest/gtest.h>

#include "docguard/codec/message.h"
#include "docguard/codec/op_compressed.h"

namespace docguard::codec {
namespace {

// The codec's tables of names (the table itself is tested with the base layer).
TEST(EnumNames, CodecTables) {
  EXPECT_STREQ(op_code_name(OpCode::kMsg), "OP_MSG");
  EXPECT_STREQ(op_code_name(OpCode::kCompressed), "OP_COMPRESSED");
  EXPECT_STREQ(op_code_name(static_cast<OpCode>(42)), "unknown");
  EXPECT_STREQ(compressor_name(static_cast<Compressor>(9)), "unknown");
}

}  // namespace
}  // namespace docguard::codec
