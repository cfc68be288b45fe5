// The recorder's admin API without sockets: the token, the methods, the JSON body's overrides
// and its errors, and the states a start and a stop leave.
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

HttpResponse call(ProxyRuntime& rt, const std::string& method, const std::string& target,
                  const std::string& authorization, const std::string& body = "") {
  asio::io_context ioc;
  HttpResponse out;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        out = co_await route_admin(method, target, authorization, rt, body);
      },
      asio::detached);
  ioc.run();
  return out;
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
  EXPECT_EQ(call(rt, "POST", "/recording/start", token).status, 409);  // no directory anywhere

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

}  // namespace
}  // namespace docguard::proxy
