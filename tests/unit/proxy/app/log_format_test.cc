#include "docguard/proxy/log_format.h"

#include <bson/bson.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "docguard/base/structured_log.h"

namespace docguard::proxy {
namespace {

constexpr std::string_view kForgedApp = "evil\n2026-12-01T00:00:00.000 critical FORGED";
constexpr std::string_view kHostileCollection = "c\n\x1b[31mred\r\t\x7f\xff\xe2\x80\xa8";

// Log calls as the proxy makes them, with client text in the message and in fields, and the
// record separator a client could send to pose as fields.
std::vector<std::string> log_hostile_lines(LogFormat format) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  spdlog::logger logger("test", sink);
  logger.set_formatter(make_log_formatter(format));
  const std::string ns = "d." + std::string(kHostileCollection);
  log::Fields fields;
  fields.add("ns", ns).add("app", kForgedApp).add("measured", 2.0);
  logger.warn("{}", fields.message("docguard design rule violated"));
  logger.warn("closing connection from {}: {}", "127.0.0.1:5", kForgedApp);
  logger.warn("client {}: {}", "x", "a\x1e\"injected\":1\x1erest");
  std::vector<std::string> lines;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(LogFormat, TextWritesOneLinePerCallWithClientTextEscaped) {
  const auto lines = log_hostile_lines(LogFormat::kText);
  ASSERT_EQ(lines.size(), 3u);
  const std::regex own_start(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3} warning )");
  for (const auto& line : lines) EXPECT_TRUE(std::regex_search(line, own_start)) << line;
  EXPECT_NE(lines[0].find(R"(ns=d.c\n\u001b[31mred\r\t\u007f\xff\u2028 )"), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find(R"(app="evil\n2026-12-01T00:00:00.000 critical FORGED")"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find(R"(127.0.0.1:5: evil\n2026-12-01T00:00:00.000 critical FORGED)"),
            std::string::npos)
      << lines[1];
  EXPECT_NE(lines[2].find(R"(client x: a\u001e"injected":1\u001erest)"), std::string::npos)
      << lines[2];
}

TEST(LogFormat, JsonStaysOneValidObjectPerLine) {
  const auto lines = log_hostile_lines(LogFormat::kJson);
  ASSERT_EQ(lines.size(), 3u);
  std::vector<std::string> apps, messages;
  for (const auto& line : lines) {
    bson_error_t error;
    bson_t* doc = bson_new_from_json(reinterpret_cast<const uint8_t*>(line.data()),
                                     static_cast<ssize_t>(line.size()), &error);
    ASSERT_NE(doc, nullptr) << error.message << ": " << line;
    bson_iter_t it;
    EXPECT_FALSE(bson_iter_init_find(&it, doc, "injected")) << line;
    if (bson_iter_init_find(&it, doc, "msg")) messages.emplace_back(bson_iter_utf8(&it, nullptr));
    if (bson_iter_init_find(&it, doc, "app")) apps.emplace_back(bson_iter_utf8(&it, nullptr));
    bson_destroy(doc);
  }
  ASSERT_EQ(apps.size(), 1u);
  EXPECT_EQ(apps[0], kForgedApp);  // JSON escapes read back as the value the client sent
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[0], "docguard design rule violated");
  EXPECT_EQ(messages[2], "client x: a\x1e\"injected\":1\x1erest");
  EXPECT_NE(lines[0].find(R"("ns":"d.c\n\u001b[31mred\r\t\u007f\\xff\u2028")"), std::string::npos)
      << lines[0];
}

}  // namespace
}  // namespace docguard::proxy
