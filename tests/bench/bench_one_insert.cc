// Decodes and inspects one small insert (~200-byte document with a small array, all rules on)
// N times. Run under callgrind twice (N=1 and N=1+K) by tests/bench/callgrind_one_insert.sh:
// the difference divided by K is the instruction count per message, without start-up costs.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>

#include "bench_messages.h"

int main(int argc, char** argv) {
  using namespace docguard;
  spdlog::set_level(spdlog::level::off);
  const long n = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 1;
  const auto message = bench::one_doc_insert(bench::small_doc(1));
  rules::Engine engine(bench::rule_set(bench::rule_configs().back().yaml), nullptr);
  const rules::RequestContext ctx{"bench", "127.0.0.1:1"};
  size_t violations = 0;
  for (long i = 0; i < n; ++i) {
    const codec::OpMsg msg = codec::OpMsg::parse(message);
    const codec::CommandView view = codec::describe(msg);
    violations += engine.inspect(view, ctx).violations.size();
  }
  std::printf("messages=%ld bytes=%zu violations=%zu\n", n, message.size(), violations);
  return violations == 0 ? 0 : 1;
}
