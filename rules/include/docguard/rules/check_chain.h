// The chain of checks the engine hands each command down: a fixed list of checks, run phase by
// phase in the list's order (the shape of Pingora's phases and Envoy's filter chain). The phases
// are declared in check_phases.h; a check lists the ones it takes part in and has their methods,
// and the chain does not compile when the two disagree (a misspelt phase method is an error, not
// a check silently left out).
//
// The list is fixed when the engine is compiled, not built at run time: a phase costs the calls
// of the checks that take part in it and nothing more, with no virtual call and no loop on the
// hot path. Adding a check is writing its phase methods, listing its phases, and naming it in
// the engine's list.
#pragma once

#include <tuple>
#include <type_traits>
#include <utility>

#include "docguard/rules/check_phases.h"

namespace docguard::rules {

template <typename... Checks>
class CheckChain {
  static_assert((phase::kContractHolds<Checks> && ...),
                "a check's Phases list and its phase methods disagree (check_phases.h)");

 public:
  explicit CheckChain(Checks&... checks) : checks_(checks...) {}

  // Runs `Phase` (check_phases.h) on every check that takes part in it, in the chain's order:
  //   chain.run<phase::Start>(pass);
  // A statement phase calls each check's overload for the statement's kind, if it has one.
  template <typename Phase, typename... Args>
  void run(Args&&... args) {
    std::apply([&](auto&... check) { (call<Phase>(check, args...), ...); }, checks_);
  }

 private:
  template <typename Phase, typename Check, typename... Args>
  static void call(Check& check, Args&... args) {
    if constexpr (Check::Phases::template kHas<Phase>) {
      if constexpr (requires { Phase::call(check, args...); }) Phase::call(check, args...);
    }
  }

  std::tuple<Checks&...> checks_;
};

}  // namespace docguard::rules
