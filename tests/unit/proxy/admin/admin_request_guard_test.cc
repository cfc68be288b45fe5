// What a browser on the admin listener's host could send for a page of another site: a foreign
// Host (a rebound name), a foreign Origin, a body that needs no preflight. Each refused; curl,
// probes and scrapers by address pass.
#include "docguard/proxy/admin_request_guard.h"

#include <gtest/gtest.h>

namespace docguard::proxy {
namespace {

ProxyConfig config() {
  ProxyConfig c;
  c.admin = {"0.0.0.0", 9216};
  c.admin_allowed_hosts = {"docguard.internal", "Metrics.Example."};
  return c;
}

bool host_passes(std::string_view host) { return !refuse_foreign_host(host, config()); }

TEST(AdminRequestGuard, HostMustNameThisListener) {
  for (std::string_view host :
       {"127.0.0.1:9216", "127.0.0.1", "[::1]:9216", "[::1]", "10.1.2.3:9216", "localhost:9216",
        "LOCALHOST", "0.0.0.0:9216", "docguard.internal:9216", "metrics.example", ""}) {
    EXPECT_TRUE(host_passes(host)) << host;
  }
  for (std::string_view host : {"evil.example:9216", "evil.example", "localhost.evil.example",
                                "127.0.0.1.nip.io:9216", "[evil]:9216", "docguard.internal.evil"}) {
    const auto refused = refuse_foreign_host(host, config());
    ASSERT_TRUE(refused) << host;
    EXPECT_EQ(refused->status, 421);
    EXPECT_NE(refused->body.find("admin.allowed_hosts"), std::string::npos);
  }
  ProxyConfig named = config();
  named.admin.host = "db-proxy.local";
  EXPECT_FALSE(refuse_foreign_host("db-proxy.local:9216", named));
}

TEST(AdminRequestGuard, APostMustBeSameOriginAndJson) {
  AdminHttpRequest r;
  r.method = "POST";
  r.host = "127.0.0.1:9216";
  EXPECT_FALSE(refuse_cross_site_post(r));  // curl -X POST: no body, no type, no Origin
  r.body = "{}";
  EXPECT_EQ(refuse_cross_site_post(r)->status, 415);  // a body without its type
  r.content_type = "text/plain";
  EXPECT_EQ(refuse_cross_site_post(r)->status, 415);
  r.content_type = "application/x-www-form-urlencoded";
  EXPECT_EQ(refuse_cross_site_post(r)->status, 415);
  r.content_type = "Application/JSON; charset=utf-8";
  EXPECT_FALSE(refuse_cross_site_post(r));
  r.origin = "http://127.0.0.1:9216";
  EXPECT_FALSE(refuse_cross_site_post(r));
  for (const char* foreign : {"http://evil.example", "null", "http://127.0.0.1:8080",
                              "http://127.0.0.1:9216.evil.example", ""}) {
    r.origin = foreign;
    const auto refused = refuse_cross_site_post(r);
    ASSERT_TRUE(refused) << foreign;
    EXPECT_EQ(refused->status, 403) << foreign;
  }
  r.origin = "http://127.0.0.1:9216";
  r.host.clear();  // an Origin without a Host to compare it with
  EXPECT_EQ(refuse_cross_site_post(r)->status, 403);
}

TEST(AdminRequestGuard, AForeignOriginIsRefusedOnAGetToo) {
  AdminHttpRequest r;
  r.method = "GET";
  r.host = "127.0.0.1:9216";
  EXPECT_FALSE(refuse_foreign_origin(r));  // curl, a scraper: no Origin
  r.origin = "http://127.0.0.1:9216";
  EXPECT_FALSE(refuse_foreign_origin(r));
  r.origin = "HTTPS://127.0.0.1:9216";
  EXPECT_FALSE(refuse_foreign_origin(r));
  for (const char* foreign : {"http://evil.example", "null", "http://127.0.0.1:8080", ""}) {
    r.origin = foreign;
    const auto refused = refuse_foreign_origin(r);
    ASSERT_TRUE(refused) << foreign;
    EXPECT_EQ(refused->status, 403) << foreign;
  }
}

TEST(AdminRequestGuard, TheBearerSchemeInAnyCaseTheTokenExactly) {
  for (const char* given : {"Bearer s3cret", "bearer s3cret", "BEARER s3cret", "BeArEr  s3cret",
                            "Bearer\ts3cret", "Bearer s3cret "}) {
    EXPECT_TRUE(bearer_token_matches(given, "s3cret")) << given;
  }
  for (const char* given :
       {"", "Bearer", "Bearer ", "Bearers3cret", "Basic s3cret", "Bearer S3CRET", "Bearer s3cre",
        "Bearer s3cret2", "s3cret", "Token s3cret", "Bearer s3cret s3cret"}) {
    EXPECT_FALSE(bearer_token_matches(given, "s3cret")) << given;
  }
}

}  // namespace
}  // namespace docguard::proxy
