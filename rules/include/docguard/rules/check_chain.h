// The chain of checks the engine hands each command down: a fixed list of checks, run phase by
// phase in the list's order (the shape of Pingora's phases and Envoy's filter chain). A check
// takes part in a phase by having that phase's method; a phase skips the checks without it.
//
// The list is fixed when the engine is compiled, not built at run time: a phase costs the calls
// of the checks that take part in it and nothing more, with no virtual call and no loop on the
// hot path. Adding a check is writing its phase methods and naming it in the engine's list.
#pragma once

#include <tuple>
#include <type_traits>

namespace docguard::rules {

template <typename... Checks>
class CheckChain {
 public:
  explicit CheckChain(Checks&... checks) : checks_(checks...) {}

  // Calls `phase(check)` for every check it can be called with, in the chain's order. A phase
  // names its method in its return type, so a check without the method is skipped when the
  // engine is compiled:
  //   chain.run([&](auto& check) -> decltype(check.start(pass)) { check.start(pass); });
  template <typename Phase>
  void run(Phase&& phase) {
    std::apply([&](auto&... check) { (call_if_taking_part(phase, check), ...); }, checks_);
  }

 private:
  template <typename Phase, typename Check>
  static void call_if_taking_part(Phase& phase, Check& check) {
    if constexpr (std::is_invocable_v<Phase&, Check&>) phase(check);
  }

  std::tuple<Checks&...> checks_;
};

}  // namespace docguard::rules
