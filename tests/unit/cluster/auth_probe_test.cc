// What the probe's answer means (no network): the server's codes and text for a connection that
// must authenticate first, read in mongod's command dispatch ("command X requires
// authentication", 13 Unauthorized) and FerretDB's ("Command X requires authentication").
#include "docguard/cluster/auth_probe.h"

#include <gtest/gtest.h>

namespace docguard::cluster {
namespace {

TEST(AuthProbe, AnAnswerMeansNotRequired) {
  EXPECT_EQ(auth_probe_answer(true, 0, ""), AuthProbeAnswer::kNotRequired);
}

TEST(AuthProbe, UnauthorizedOrAuthenticationFailedMeansRequired) {
  EXPECT_EQ(auth_probe_answer(false, 13, "command listDatabases requires authentication"),
            AuthProbeAnswer::kRequired);
  EXPECT_EQ(auth_probe_answer(false, 18, "Authentication failed."), AuthProbeAnswer::kRequired);
  EXPECT_EQ(auth_probe_answer(false, 0, "Command listDatabases requires authentication"),
            AuthProbeAnswer::kRequired);
}

TEST(AuthProbe, AnyOtherRefusalDecidesNothing) {
  EXPECT_EQ(auth_probe_answer(false, 59, "no such command: 'listDatabases'"),
            AuthProbeAnswer::kUnknown);
  EXPECT_EQ(auth_probe_answer(false, 0, "No suitable servers found"), AuthProbeAnswer::kUnknown);
}

TEST(AuthProbe, AnUnreachableUpstreamIsUnknown) {
  const AuthProbeResult r =
      probe_upstream_auth("mongodb://127.0.0.1:1/?directConnection=true", 300);
  EXPECT_EQ(r.answer, AuthProbeAnswer::kUnknown);
  EXPECT_FALSE(r.message.empty());
}

}  // namespace
}  // namespace docguard::cluster
