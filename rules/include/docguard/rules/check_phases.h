// The phases of the chain of checks (check_chain.h), in the order a command meets them: the
// contract between the engine and its checks, in code. Each phase names its method and what it
// hands the method; a check lists the phases it takes part in (`using Phases = ...`) and has a
// method for each. The chain refuses to compile a check whose list and methods disagree: a
// misspelt or missing method of a listed phase, or a phase method the list leaves out.
//
//   BeginCommand       begin_command()                once per command, before its passes;
//   Start              start(pass)                    once per pass, before anything is judged;
//   JudgeRead          judge_read(pass)               a read (find, aggregate, count, distinct,
//                                                     an explained read);
//   JudgeWrite         judge_write(pass, statement)   each write statement (write_statement.h);
//   LearnWrite         learn_write(pass, statement)   then, the statement's verdict known, what
//                                                     each check learns;
//   LearnDefinition    learn_definition(cmd, rules)   a command that defines (create);
//   LearnRead          learn_read(document)           a document read back (a sampled reply's,
//                                                     or the store's);
//   LearnCatalogReply  learn_catalog_reply(cmd, reply) a catalog command's successful reply.
//
// A statement phase calls a check with the overload for the statement's kind; a check that
// takes part has at least one.
#pragma once

#include <type_traits>
#include <utility>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/command_view.h"
#include "docguard/rules/command_pass.h"
#include "docguard/rules/read_document.h"
#include "docguard/rules/rule_set.h"
#include "docguard/rules/write_statement.h"

namespace docguard::rules::phase {

struct BeginCommand {
  template <class C, class... A>
  static auto call(C& c, A&&... a) -> decltype(c.begin_command(std::forward<A>(a)...)) {
    return c.begin_command(std::forward<A>(a)...);
  }
  template <class C>
  static constexpr bool kImplementedBy = requires(C& c) {
    c.begin_command();
  };
};

struct Start {
  template <class C, class... A>
  static auto call(C& c, A&&... a) -> decltype(c.start(std::forward<A>(a)...)) {
    return c.start(std::forward<A>(a)...);
  }
  template <class C>
  static constexpr bool kImplementedBy = requires(C& c, CommandPass& p) {
    c.start(p);
  };
};

struct JudgeRead {
  template <class C, class... A>
  static auto call(C& c, A&&... a) -> decltype(c.judge_read(std::forward<A>(a)...)) {
    return c.judge_read(std::forward<A>(a)...);
  }
  template <class C>
  static constexpr bool kImplementedBy = requires(C& c, CommandPass& p) {
    c.judge_read(p);
  };
};

// Whether a statement phase's method exists for some kind of write statement: `Takes<S>` says
// it for one kind.
template <template <class> class Takes>
inline constexpr bool kTakesSomeStatement =
    Takes<InsertStatement>::value || Takes<ReplacementStatement>::value ||
    Takes<OperatorUpdateStatement>::value || Takes<UpdateStatement>::value ||
    Takes<DeleteStatement>::value;

struct JudgeWrite {
  template <class C, class... A>
  static auto call(C& c, A&&... a) -> decltype(c.judge_write(std::forward<A>(a)...)) {
    return c.judge_write(std::forward<A>(a)...);
  }
  template <class C>
  struct Check {
    template <class S>
    using Takes = std::bool_constant < requires(C& c, CommandPass& p, const S& s) {
      c.judge_write(p, s);
    }
    > ;
  };
  template <class C>
  static constexpr bool kImplementedBy = kTakesSomeStatement<Check<C>::template Takes>;
};

struct LearnWrite {
  template <class C, class... A>
  static auto call(C& c, A&&... a) -> decltype(c.learn_write(std::forward<A>(a)...)) {
    return c.learn_write(std::forward<A>(a)...);
  }
  template <class C>
  struct Check {
    template <class S>
    using Takes = std::bool_constant < requires(C& c, CommandPass& p, const S& s) {
      c.learn_write(p, s);
    }
    > ;
  };
  template <class C>
  static constexpr bool kImplementedBy = kTakesSomeStatement<Check<C>::template Takes>;
};

struct LearnDefinition {
  template <class C, class... A>
  static auto call(C& c, A&&... a) -> decltype(c.learn_definition(std::forward<A>(a)...)) {
    return c.learn_definition(std::forward<A>(a)...);
  }
  template <class C>
  static constexpr bool kImplementedBy = requires(C& c, const codec::CommandView& cmd,
                                                  const RuleSet& r) {
    c.learn_definition(cmd, r);
  };
};

struct LearnRead {
  template <class C, class... A>
  static auto call(C& c, A&&... a) -> decltype(c.learn_read(std::forward<A>(a)...)) {
    return c.learn_read(std::forward<A>(a)...);
  }
  template <class C>
  static constexpr bool kImplementedBy = requires(C& c, const ReadDocument& d) {
    c.learn_read(d);
  };
};

struct LearnCatalogReply {
  template <class C, class... A>
  static auto call(C& c, A&&... a) -> decltype(c.learn_catalog_reply(std::forward<A>(a)...)) {
    return c.learn_catalog_reply(std::forward<A>(a)...);
  }
  template <class C>
  static constexpr bool kImplementedBy = requires(C& c, const codec::CommandView& cmd,
                                                  const codec::BsonView& reply) {
    c.learn_catalog_reply(cmd, reply);
  };
};

// The phases a check takes part in.
template <class... P>
struct List {
  template <class Q>
  static constexpr bool kHas = (std::is_same_v<P, Q> || ...);
};

// Every phase, for the contract below.
template <template <class...> class Each>
using ForAll = Each<BeginCommand, Start, JudgeRead, JudgeWrite, LearnWrite, LearnDefinition,
                    LearnRead, LearnCatalogReply>;

template <class C>
struct Agrees {
  template <class... P>
  struct With {
    static constexpr bool kValue =
        ((C::Phases::template kHas<P> == P::template kImplementedBy<C>)&&...);
  };
};

// A check's listed phases are exactly the phases it has a method for.
template <class C>
inline constexpr bool kContractHolds = ForAll<Agrees<C>::template With>::kValue;

}  // namespace docguard::rules::phase
