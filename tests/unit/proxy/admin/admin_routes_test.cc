// The admin router's checks in the order a request meets them, without sockets: every path
// refuses a foreign Host (421); the probes need no token and answer any Origin; every other
// path, unknown ones included, refuses a foreign Origin (403) before the token is looked at,
// then needs the token.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "docguard/proxy/admin_endpoints.h"
#include "docguard/settings/yaml_settings.h"

namespace docguard::proxy {
namespace {

namespace asio = boost::asio;

ProxyConfig config(const std::string& token) {
  ProxyConfig c;
  c.rules = settings::parse_rules(YAML::Node(), "<defaults>");
  c.admin = {"0.0.0.0", 9216};
  c.admin_token = token;
  // Nothing listens there: /readyz answers 503 at once instead of waiting for a server.
  settings::set_upstream(c, "mongodb://127.0.0.1:1");
  return c;
}

HttpResponse get(ProxyRuntime& rt, const std::string& path, const std::string& authorization = "",
                 const std::string& host = "10.0.0.5:9216",
                 std::optional<std::string> origin = std::nullopt) {
  AdminHttpRequest request;
  request.method = "GET";
  request.target = path;
  request.authorization = authorization;
  request.host = host;
  request.origin = std::move(origin);
  asio::io_context ioc;
  HttpResponse out;
  asio::co_spawn(
      ioc, [&]() -> asio::awaitable<void> { out = co_await route_admin(request, rt); },
      asio::detached);
  ioc.run();
  return out;
}

constexpr const char* kGuarded[] = {"/metrics",     "/status",    "/report",
                                    "/report.json", "/recording", "/nope"};

TEST(AdminRoutes, TheProbesNeedNoTokenEverythingElseDoes) {
  ProxyRuntime rt(config("s3cret"));
  EXPECT_EQ(get(rt, "/healthz").status, 200);
  EXPECT_EQ(get(rt, "/readyz").status, 503);  // a Kubernetes probe sends no header
  for (const char* path : kGuarded) {
    EXPECT_EQ(get(rt, path).status, 401) << path;
    EXPECT_EQ(get(rt, path, "Bearer wrong").status, 401) << path;
    EXPECT_NE(get(rt, path, "bearer s3cret").status, 401) << path;
  }
  EXPECT_EQ(get(rt, "/status", "BEARER s3cret").status, 200);
}

TEST(AdminRoutes, AForeignHostOrOriginIsRefusedOnEveryPathButTheProbes) {
  ProxyRuntime rt(config("s3cret"));
  for (const char* path : kGuarded) {
    EXPECT_EQ(get(rt, path, "Bearer s3cret", "attacker.example").status, 421) << path;
    EXPECT_EQ(get(rt, path, "Bearer s3cret", "10.0.0.5:9216", "http://evil.example").status, 403)
        << path;
  }
  EXPECT_EQ(get(rt, "/status", "Bearer s3cret", "10.0.0.5:9216", "http://10.0.0.5:9216").status,
            200);
  for (const char* probe : {"/healthz", "/readyz"}) {
    EXPECT_EQ(get(rt, probe, "", "attacker.example").status, 421) << probe;
    EXPECT_NE(get(rt, probe, "", "10.0.0.5:9216", "http://evil.example").status / 100, 4) << probe;
  }
}

TEST(AdminRoutes, StatusSaysWhetherTheAdminApiIsOpen) {
  ProxyRuntime closed(config("s3cret"));
  const std::string with_token = get(closed, "/status", "Bearer s3cret").body;
  EXPECT_NE(with_token.find(R"("token_required":true)"), std::string::npos) << with_token;
  EXPECT_NE(with_token.find(R"("open_without_token":false)"), std::string::npos);
  ProxyRuntime open(config(""));
  const std::string without = get(open, "/status").body;
  EXPECT_NE(without.find(R"("open_without_token":true)"), std::string::npos) << without;
  EXPECT_NE(without.find(R"("listen":"0.0.0.0:9216")"), std::string::npos) << without;
}

}  // namespace
}  // namespace docguard::proxy
