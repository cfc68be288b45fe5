// The recorder's admin API without sockets: the token (or the opt-in without one), the methods,
// the JSON body's overrides and its errors (400 for settings out of bounds, 409 for a state
// conflict only), a cross-site start refused, and the states a start and a stop leave.
#include "docguard/proxy/recording_endpoints.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <filesystem>

#include "docguard/settings/yaml_settings.h"

namespace docguard::proxy {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;

ProxyConfig config_with_token() {
  ProxyConfig c;
  c.rules = settings::parse_rules(YAML::Node(), "<defaults>");
  c.admin_token = "sesame";
  return c;
}

HttpResponse route(ProxyRuntime& rt, const AdminHttpRequest& request) {
  asio::io_context ioc;
  HttpResponse out;
  asio::co_spawn(
      ioc, [&]() -> asio::awaitable<void> { out = co_await route_admin(request, rt); },
      asio::detached);
  ioc.run();
  return out;
}

// As curl sends it: Host is the address dialled, a body is JSON.
HttpResponse call(ProxyRuntime& rt, const std::string& method, const std::string& target,
                  const std::string& authorization, const std::string& body = "") {
  AdminHttpRequest request;
  request.method = method;
  request.target = target;
  request.authorization = authorization;
  request.host = "127.0.0.1:9216";
  if (!body.empty()) request.content_type = "application/json";
  request.body = body;
  return route(rt, request);
}

fs::path scratch_directory(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("docguard-rec-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  return dir;
}

TEST(RecordingEndpoints, JsonOverridesTheSettings) {
  settings::RecordingSettings s;
  EXPECT_TRUE(apply_recording_json(R"({"directory": "/tmp/r", "apps": ["a"], "users": "u",
                                     "namespaces": ["db.*"], "sample": 0.5,
                                     "max_duration": "2m", "queue_bytes": 4096})",
                                   s));
  EXPECT_EQ(s.directory, "/tmp/r");
  EXPECT_EQ(s.apps, std::vector<std::string>{"a"});
  EXPECT_EQ(s.users, std::vector<std::string>{"u"});
  EXPECT_EQ(s.namespaces, std::vector<std::string>{"db.*"});
  EXPECT_DOUBLE_EQ(s.sample, 0.5);
  EXPECT_EQ(s.max_duration, std::chrono::minutes(2));
  EXPECT_EQ(s.queue_bytes, 4096u);
  EXPECT_TRUE(apply_recording_json(R"({"max_duration": 1.5})", s));
  EXPECT_EQ(s.max_duration, std::chrono::milliseconds(1500));
  EXPECT_TRUE(apply_recording_json("", s));  // no body: the config's settings
  EXPECT_NE(apply_recording_json(R"({"unknown": 1})", s).error().message.find("unknown"),
            std::string::npos);
  EXPECT_FALSE(apply_recording_json(R"({"apps": [1]})", s));
  EXPECT_FALSE(apply_recording_json(R"({"queue_bytes": -1})", s));
  EXPECT_FALSE(apply_recording_json("not json", s));
}

TEST(RecordingEndpoints, TokenMethodsAndStates) {
  const fs::path dir = fs::temp_directory_path() / ("docguard-rec-api-" + std::to_string(getpid()));
  fs::remove_all(dir);
  ProxyRuntime rt(config_with_token());
  const std::string token = "Bearer sesame";
  const std::string body = R"({"directory": ")" + dir.string() + R"("})";
  EXPECT_EQ(call(rt, "POST", "/recording/start", "", body).status, 401);
  EXPECT_EQ(call(rt, "POST", "/recording/start", "Bearer wrong", body).status, 401);
  EXPECT_EQ(call(rt, "GET", "/recording", "").status, 401);
  EXPECT_FALSE(rt.recorder.active());
  EXPECT_FALSE(fs::exists(dir));

  EXPECT_EQ(call(rt, "GET", "/recording/start", token).status, 405);
  EXPECT_EQ(call(rt, "POST", "/status", token).status, 405);  // others stay GET only
  EXPECT_EQ(call(rt, "POST", "/recording/start", token, R"({"directory": 7})").status, 400);
  EXPECT_EQ(call(rt, "POST", "/recording/start", token).status, 400);  // no directory anywhere

  const HttpResponse started = call(rt, "POST", "/recording/start", token, body);
  EXPECT_EQ(started.status, 200) << started.body;
  EXPECT_NE(started.body.find("\"state\":\"recording\""), std::string::npos);
  EXPECT_TRUE(rt.recorder.active());
  EXPECT_EQ(call(rt, "POST", "/recording/start", token, body).status, 409);
  const HttpResponse status = call(rt, "GET", "/recording", token);
  EXPECT_NE(status.body.find(dir.string()), std::string::npos);

  const HttpResponse stopped = call(rt, "POST", "/recording/stop", token);
  EXPECT_EQ(stopped.status, 200);
  EXPECT_NE(stopped.body.find("\"state\":\"stopped\""), std::string::npos);
  EXPECT_EQ(call(rt, "POST", "/recording/stop", token).status, 409);
  EXPECT_TRUE(fs::exists(dir / "checksum.txt"));
  fs::remove_all(dir);
}

TEST(RecordingEndpoints, WithoutATokenOnlyTheOptInRecords) {
  const fs::path dir = scratch_directory("no-token");
  const std::string body = R"({"directory": ")" + dir.string() + R"("})";
  ProxyConfig open_config = config_with_token();
  open_config.admin_token.clear();
  {
    ProxyRuntime rt(open_config);
    const HttpResponse refused = call(rt, "POST", "/recording/start", "", body);
    EXPECT_EQ(refused.status, 403);
    EXPECT_NE(refused.body.find("admin.token"), std::string::npos) << refused.body;
    EXPECT_NE(refused.body.find("recording.api_without_token"), std::string::npos);
    EXPECT_EQ(call(rt, "POST", "/recording/stop", "").status, 403);
    EXPECT_EQ(call(rt, "GET", "/recording", "").status, 200);  // reading the state stays open
    EXPECT_FALSE(fs::exists(dir));
  }
  open_config.recording.api_without_token = true;
  ProxyRuntime rt(open_config);
  EXPECT_EQ(call(rt, "POST", "/recording/start", "", body).status, 200);
  EXPECT_EQ(call(rt, "POST", "/recording/stop", "").status, 200);
  fs::remove_all(dir);
}

TEST(RecordingEndpoints, SettingsOutOfBoundsAreTheRequestsFault) {
  const fs::path dir = scratch_directory("bounds");
  ProxyRuntime rt(config_with_token());
  const std::string token = "Bearer sesame";
  const auto start = [&](const std::string& members) {
    return call(rt, "POST", "/recording/start", token,
                R"({"directory": ")" + dir.string() + R"(", )" + members + "}");
  };
  const HttpResponse forever = start(R"("max_duration": 1e17)");
  EXPECT_EQ(forever.status, 400) << forever.body;
  EXPECT_NE(forever.body.find("30 days"), std::string::npos) << forever.body;
  EXPECT_EQ(start(R"("max_duration": "31d")").status, 400);
  const HttpResponse tiny = start(R"("max_file_bytes": 1)");
  EXPECT_EQ(tiny.status, 400);
  EXPECT_NE(tiny.body.find("recording.max_file_bytes"), std::string::npos) << tiny.body;
  EXPECT_EQ(start(R"("queue_bytes": 1e17)").status, 400);
  EXPECT_EQ(start(R"("max_total_bytes": 10)").status, 400);
  const HttpResponse relative =
      call(rt, "POST", "/recording/start", token, R"({"directory": "rec/here"})");
  EXPECT_EQ(relative.status, 400);
  EXPECT_NE(relative.body.find("absolute"), std::string::npos) << relative.body;
  EXPECT_FALSE(rt.recorder.active());
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_FALSE(fs::exists("rec/here"));
}

TEST(RecordingEndpoints, AStartFromAnotherSiteIsRefused) {
  const fs::path dir = scratch_directory("cross-site");
  ProxyConfig open_config = config_with_token();
  open_config.admin_token.clear();
  open_config.recording.api_without_token = true;  // even then
  ProxyRuntime rt(open_config);
  AdminHttpRequest request;
  request.method = "POST";
  request.target = "/recording/start";
  request.host = "127.0.0.1:9216";
  request.body = R"({"directory": ")" + dir.string() + R"("})";
  // A form or fetch() of another page: text/plain needs no preflight.
  request.content_type = "text/plain;charset=UTF-8";
  EXPECT_EQ(route(rt, request).status, 415);
  request.origin = "http://evil.example";
  EXPECT_EQ(route(rt, request).status, 403);
  request.content_type = "application/json";
  EXPECT_EQ(route(rt, request).status, 403);
  // A page whose name was rebound to 127.0.0.1: its own origin, a foreign Host.
  request.host = "evil.example:9216";
  request.origin = "http://evil.example:9216";
  EXPECT_EQ(route(rt, request).status, 421);
  EXPECT_FALSE(rt.recorder.active());
  EXPECT_FALSE(fs::exists(dir));
  // The listener's own origin (a page it served) may.
  request.host = "127.0.0.1:9216";
  request.origin = "http://127.0.0.1:9216";
  EXPECT_EQ(route(rt, request).status, 200);
  EXPECT_TRUE(rt.recorder.stop());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace docguard::proxy
