// A target with undefined behaviour on purpose: an input "U" followed by eight bytes casts that
// double to long long, which is undefined when it is out of range (the shape of the bug the fuzz
// run once reported and went on past). scripts/fuzz.sh runs this first and requires it to fail
// and leave the input as an artifact: if it passes, undefined behaviour is not fatal in this
// build and no other target's clean run means anything.
#include <cstddef>
#include <cstdint>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size != 9 || data[0] != 'U') return 0;
  double value = 0;
  std::memcpy(&value, data + 1, sizeof value);
  volatile long long cast = static_cast<long long>(value);
  (void)cast;
  return 0;
}
