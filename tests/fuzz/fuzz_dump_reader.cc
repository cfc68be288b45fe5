// The dump reader on arbitrary bytes: archive framing (magic, prelude, namespace blocks,
// terminators) or a BSON stream, and the profile's own BSON walker on every framed document.
// Any input must end in success or a ReadError whose offset lies inside the input.
#include <cstddef>
#include <cstdint>

#include "docguard/advisor/dump_profiler.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace docguard::advisor;
  AdvisorSettings settings;
  settings.max_field_paths = 64;  // keep each run small; the bounds themselves are exercised
  DumpProfiler profiler(settings);
  ReaderLimits limits;
  limits.max_document_bytes = 1 << 20;
  limits.read_chunk_bytes = 4096;  // documents straddle chunks: the buffer's compaction runs
  const auto error = read_stream_from_memory("fuzz.input", data, size, profiler, limits);
  if (error && error->offset > size) __builtin_trap();
  return 0;
}
