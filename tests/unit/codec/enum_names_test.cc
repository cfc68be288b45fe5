#include <gtest/gtest.h>

#include "docguard/codec/op_compressed.h"

namespace docguard::codec {
namespace {

// The codec's table of names (the table itself is tested with the base layer).
TEST(EnumNames, CodecTables) {
  EXPECT_STREQ(compressor_name(static_cast<Compressor>(9)), "unknown");
}

}  // namespace
}  // namespace docguard::codec
