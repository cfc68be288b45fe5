// Decodes and inspects one small insert (~200-byte document with a small array, all rules on)
// N times. Run under callgrind twice (N=1 and N=1+K) by tests/bench/callgrind_one_insert.sh:
// the difference divided by K is the instruction count per message, without start-up costs.
// A second argument S adds S rules scoped by `apps:`, the first of which applies to this
// connection, to measure what scoped rules cost per message.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_messages.h"

int main(int argc, char** argv) {
  using namespace docguard;
  spdlog::set_level(spdlog::level::off);
  const long n = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 1;
  const long scoped = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 0;
  const auto message = bench::one_doc_insert(bench::small_doc(1));
  std::string yaml = bench::rule_configs().back().yaml;
  for (long i = 0; i < scoped; ++i) {
    yaml += "  - match: '*'\n    apps: [" +
            (i == 0 ? std::string("bench") : "app-" + std::to_string(i)) +
            "]\n    max_array_length: 20000\n";
  }
  rules::Engine engine(bench::rule_set(yaml.c_str()), nullptr, nullptr);
  // As a conversation does: the connection's scope is found once and remembered.
  rules::ConnectionScopeId scope("127.0.0.1:1");
  const rules::RequestContext ctx{"bench", "127.0.0.1:1", "", &scope};
  size_t violations = 0;
  for (long i = 0; i < n; ++i) {
    const codec::OpMsg msg = codec::OpMsg::parse(message);
    const codec::CommandView view = codec::describe(msg);
    violations += engine.inspect(view, ctx).violations.size();
  }
  std::printf("messages=%ld bytes=%zu violations=%zu\n", n, message.size(), violations);
  return violations == 0 ? 0 : 1;
}
