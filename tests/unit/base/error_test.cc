#include "docguard/base/error.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include "docguard/base/expected.h"

namespace docguard::base {
namespace {

TEST(Error, KindsHaveTheirNames) {
  // The protocol kinds' names are metric labels: these must never change.
  EXPECT_STREQ(name(ErrorKind::kBadLength), "bad_length");
  EXPECT_STREQ(name(ErrorKind::kFrameTimeout), "client_frame_timeout");
  EXPECT_STREQ(name(ErrorKind::kSilent), "upstream_timeout");
  EXPECT_STREQ(name(ErrorKind::kTlsHandshake), "tls_handshake");
  EXPECT_STREQ(name(ErrorKind::kTooManyInFlight), "too_many_in_flight");
  EXPECT_STREQ(name(ErrorKind::kNotAuthorized), "not_authorized");
  EXPECT_STREQ(name(ErrorKind::kConfiguration), "configuration");
  EXPECT_STREQ(name(ErrorKind::kInternal), "internal");
  EXPECT_STREQ(name(static_cast<ErrorKind>(250)), "unknown");
}

TEST(Error, EveryKindHasItsOwnName) {
  std::set<std::string> names;
  for (int k = 0; k <= static_cast<int>(ErrorKind::kInternal); ++k) {
    const std::string n = name(static_cast<ErrorKind>(k));
    EXPECT_NE(n, "unknown") << k;
    EXPECT_TRUE(names.insert(n).second) << n;
  }
}

TEST(Error, SourcesHaveTheirNames) {
  EXPECT_STREQ(name(ErrorSource::kClient), "client");
  EXPECT_STREQ(name(ErrorSource::kUpstream), "upstream");
  EXPECT_STREQ(name(ErrorSource::kDocguard), "docguard");
  EXPECT_STREQ(name(ErrorSource::kConfiguration), "configuration");
}

TEST(Error, RetryHelpsWithTheNetworkNotWithWhatNeedsAChange) {
  for (ErrorKind kind :
       {ErrorKind::kFrameTimeout, ErrorKind::kIdleTimeout, ErrorKind::kSilent, ErrorKind::kConnect,
        ErrorKind::kClosed, ErrorKind::kNetwork, ErrorKind::kTimeout}) {
    EXPECT_TRUE(retry_can_help_by_default(kind)) << name(kind);
    EXPECT_TRUE((Error{kind, ErrorSource::kUpstream}.retry_can_help)) << name(kind);
  }
  for (ErrorKind kind :
       {ErrorKind::kBadBson, ErrorKind::kTooLarge, ErrorKind::kTlsHandshake, ErrorKind::kBadInput,
        ErrorKind::kNotAuthorized, ErrorKind::kNotSupported, ErrorKind::kNotFound,
        ErrorKind::kStopped, ErrorKind::kConfiguration, ErrorKind::kInternal}) {
    EXPECT_FALSE(retry_can_help_by_default(kind)) << name(kind);
    EXPECT_FALSE((Error{kind, ErrorSource::kClient}.retry_can_help)) << name(kind);
  }
}

TEST(Error, CarriesSourceMessageSubjectAndCode) {
  Error e{ErrorKind::kConfiguration, ErrorSource::kConfiguration, "upstream URI option x: unknown",
          "x"};
  EXPECT_EQ(e.source, ErrorSource::kConfiguration);
  EXPECT_EQ(e.message, "upstream URI option x: unknown");
  EXPECT_EQ(e.subject, "x");
  EXPECT_EQ(e.code, 0);
  const Error defaulted;
  EXPECT_EQ(defaulted.kind, ErrorKind::kInternal);
  EXPECT_EQ(defaulted.source, ErrorSource::kDocguard);
  EXPECT_FALSE(defaulted.retry_can_help);
  // A caller may overrule the kind's default.
  e.retry_can_help = true;
  EXPECT_NE(e, (Error{ErrorKind::kConfiguration, ErrorSource::kConfiguration,
                      "upstream URI option x: unknown", "x"}));
}

// A reader whose failure says more than a sentence (where in a file it stopped) keeps its own
// error type and the same convention: truthy means success.
struct Stopped {
  uint64_t offset = 0;
};

TEST(Expected, CarriesAnErrorTypeOfItsOwn) {
  const Expected<void, Stopped> done;
  EXPECT_TRUE(done);
  const Expected<void, Stopped> cut = Stopped{42};
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error().offset, 42u);
  const Expected<int, Stopped> value = 7;
  ASSERT_TRUE(value);
  EXPECT_EQ(*value, 7);
}

TEST(Expected, BadInputIsTheKindForWhatCannotBeUsed) {
  const Expected<void> refused = bad_input("not a BSON document");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::kBadInput);
  EXPECT_EQ(refused.error().source, ErrorSource::kDocguard);
  EXPECT_EQ(refused.error().message, "not a BSON document");
  EXPECT_FALSE(refused.error().retry_can_help);
}

TEST(Error, AKindAndASourceMakeOne) {
  static const Error kTimeout{ErrorKind::kSilent, ErrorSource::kUpstream};
  static_assert(retry_can_help_by_default(ErrorKind::kSilent));
  EXPECT_TRUE(kTimeout.retry_can_help);
  EXPECT_TRUE(kTimeout.message.empty());
}

TEST(Expected, HoldsAValue) {
  Expected<std::string> got = std::string("shop");
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(static_cast<bool>(got));
  EXPECT_EQ(*got, "shop");
  EXPECT_EQ(got->size(), 4u);
  EXPECT_EQ(std::move(got).value(), "shop");
}

TEST(Expected, HoldsAnError) {
  const Expected<int> got = Error{ErrorKind::kNotFound, ErrorSource::kUpstream, "no collection"};
  ASSERT_FALSE(got.ok());
  EXPECT_FALSE(static_cast<bool>(got));
  EXPECT_EQ(got.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(got.error().message, "no collection");
}

TEST(Expected, MovesAValueThatCannotBeCopied) {
  Expected<std::unique_ptr<int>> got = std::make_unique<int>(7);
  const std::unique_ptr<int> taken = std::move(got).value();
  EXPECT_EQ(*taken, 7);
}

TEST(Expected, VoidIsASuccessOrAnError) {
  const Expected<void> done;
  EXPECT_TRUE(done.ok());
  const Expected<void> failed = Error{ErrorKind::kIo, ErrorSource::kDocguard, "cannot read x"};
  EXPECT_FALSE(static_cast<bool>(failed));
  EXPECT_EQ(failed.error().kind, ErrorKind::kIo);
}

}  // namespace
}  // namespace docguard::base
