// docguard whatif: a recording written with the recorder's own file writer, judged with a
// candidate configuration by the live conversation and engine. Refusals and warnings per app,
// rule and shape with their (connection, order) pairs; user scopes from the side file; indexes
// learned from a recorded listIndexes reply; values redacted unless asked; the exit code.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "docguard/codec/op_msg.h"
#include "docguard/recording/recording_files.h"
#include "docguard/settings/settings_reader.h"
#include "docguard/tools/whatif.h"
#include "test_messages.h"
#include "whatif/whatif_judgement.h"

namespace docguard::tools::whatif {
namespace {

namespace fs = std::filesystem;
using testing::json;
using testing::op_msg;

constexpr const char* kCandidate = R"(mode: block
tracking:
  read_sample_rate: 0
introspection:
  enabled: false
rules:
  - match: "shop.*"
    max_document_bytes: 200
  - id: shop-indexes
    match: "shop.orders"
    require_index: true
  - match: "crm.people"
    users: ["api@admin"]
    max_array_length: 3
  - match: "crm.people"
    apps: ["report*"]
    action: warn
    max_array_length: 3
)";

constexpr const char* kPermissive = R"(mode: warn
introspection:
  enabled: false
rules:
  - match: "*"
    max_document_bytes: 16MiB
)";

// An insert whose documents travel in a document sequence, as drivers send them.
std::vector<uint8_t> insert(const char* coll, const char* db, const char* document, int32_t id) {
  auto body =
      json((std::string(R"({"insert": ")") + coll + R"(", "$db": ")" + db + R"("})").c_str());
  auto doc = json(document);
  return codec::OpMsgBuilder(id, 0)
      .body(body.get())
      .sequence("documents", {testing::view(doc)})
      .finish();
}

std::vector<uint8_t> reply(const char* body_json, int32_t response_to) {
  auto body = json(body_json);
  return codec::OpMsgBuilder(9000 + response_to, response_to).body(body.get()).finish();
}

class RecordingJudgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("docguard-whatif-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    files_ = std::make_unique<recording::RecordingFiles>(dir_, 1 << 20, 1 << 30);
    files_->open();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // One packet and its side line, as the recorder writes them.
  uint64_t write(codec::RecordedEvent event, uint64_t connection,
                 const std::vector<uint8_t>& message, const std::string& app = "",
                 const std::string& user = "") {
    const uint64_t order = ++order_;
    std::string line = "{\"connection\":" + std::to_string(connection) +
                       ",\"order\":" + std::to_string(order) + ",\"event\":\"x\"";
    if (!app.empty()) line += ",\"app\":\"" + app + "\"";
    if (!user.empty()) line += ",\"user\":\"" + user + "\"";
    line += "}";
    files_->write(
        {event, connection, "127.0.0.1:" + std::to_string(40000 + connection), order * 10, order},
        message, line);
    return order;
  }
  uint64_t request(uint64_t connection, const std::vector<uint8_t>& message,
                   const std::string& app = "", const std::string& user = "") {
    return write(codec::RecordedEvent::kRequest, connection, message, app, user);
  }
  void start(uint64_t connection) { write(codec::RecordedEvent::kSessionStart, connection, {}); }

  // A workload: one app that writes a large document and queries with and without an index,
  // a user whose array rule refuses, the same write without that user, and a warned app.
  struct Expected {
    std::vector<RequestRef> refused;
    RequestRef warned;
  };
  Expected record_workload() {
    Expected e;
    start(1);
    request(1, op_msg(R"({"hello": 1, "client": {"application": {"name": "billing"}},
                          "$db": "admin"})",
                      1));
    write(codec::RecordedEvent::kResponse, 1, reply(R"({"isWritablePrimary": true, "ok": 1})", 1),
          "billing");
    request(1, op_msg(R"({"listIndexes": "orders", "$db": "shop"})", 2), "billing");
    write(codec::RecordedEvent::kResponse, 1,
          reply(R"({"cursor": {"id": {"$numberLong": "0"}, "ns": "shop.orders", "firstBatch": [
                      {"v": 2, "key": {"_id": 1}, "name": "_id_"},
                      {"v": 2, "key": {"status": 1}, "name": "status_1"}]}, "ok": 1})",
                2),
          "billing");
    const std::string big = R"({"_id": 1, "note": ")" + std::string(300, 'x') + R"("})";
    e.refused.push_back({1, request(1, insert("orders", "shop", big.c_str(), 3), "billing")});
    request(1, insert("orders", "shop", R"({"_id": 2, "secret": "hunter2"})", 4), "billing");
    request(1, op_msg(R"({"find": "orders", "filter": {"status": "open"}, "$db": "shop"})", 5),
            "billing");
    e.refused.push_back({1, request(1,
                                    op_msg(R"({"find": "orders", "filter": {"customer": 7},
                                                 "$db": "shop"})",
                                           6),
                                    "billing")});
    start(2);
    e.refused.push_back(
        {2, request(2, insert("people", "crm", R"({"tags": [1, 2, 3, 4]})", 1), "", "api@admin")});
    start(3);
    request(3, insert("people", "crm", R"({"tags": [1, 2, 3, 4]})", 1), "", "other@admin");
    start(4);
    request(4, op_msg(R"({"hello": 1, "client": {"application": {"name": "reporter"}},
                          "$db": "admin"})",
                      1));
    e.warned = {4,
                request(4, insert("people", "crm", R"({"tags": [1, 2, 3, 4, 5]})", 2), "reporter")};
    files_->close();
    return e;
  }

  std::string config(const char* text) {
    const fs::path path = dir_.string() + ".yaml";
    std::ofstream(path) << text;
    return path.string();
  }

  // The command with its arguments as the command line gives them (tests/unit/app reads them).
  int run(const std::string& config, const fs::path& recording, const std::string& format,
          const std::string& output) {
    WhatifArguments args;
    args.config = config;
    args.recording = recording.string();
    args.format = format;
    args.output = output;
    return run_whatif(args, [](const std::string& path) {
      const auto file = settings::load_config_file(path);
      return WhatifConfig{file.rules, file.max_message_bytes};
    });
  }

  fs::path dir_;
  std::unique_ptr<recording::RecordingFiles> files_;
  uint64_t order_ = 0;
};

TEST_F(RecordingJudgeTest, RefusesWhatTheCandidateRefusesPerAppRuleAndShape) {
  const Expected expected = record_workload();
  const auto rules = settings::load_config_file(config(kCandidate)).rules;
  auto judged = judge_recording(dir_, rules, codec::kDefaultMaxMessageBytes, false);
  ASSERT_TRUE(judged) << judged.error().message;
  EXPECT_EQ(judged->refused, expected.refused);
  EXPECT_EQ(judged->connections, 4u);

  std::map<std::string, const Group*> by;
  for (const Group& g : judged->groups) by[g.app + "|" + g.rule + "|" + g.shape] = &g;
  ASSERT_TRUE(by.count("billing|max_document_bytes|insert shop.orders")) << render_text(*judged);
  const Group& size = *by["billing|max_document_bytes|insert shop.orders"];
  EXPECT_TRUE(size.refused);
  EXPECT_EQ(size.count, 1u);
  ASSERT_EQ(size.examples.size(), 1u);
  EXPECT_EQ(size.examples[0].at, expected.refused[0]);
  // The guardrail's shape is its own; the indexed query is not refused.
  const Group* unindexed = nullptr;
  for (const Group& g : judged->groups) {
    if (g.rule == "require_index") unindexed = &g;
  }
  ASSERT_NE(unindexed, nullptr) << render_text(*judged);
  EXPECT_EQ(unindexed->count, 1u);
  EXPECT_NE(unindexed->shape.find("customer"), std::string::npos) << unindexed->shape;
  EXPECT_NE(unindexed->examples[0].detail.find("customer: 1"), std::string::npos)
      << unindexed->examples[0].detail;
  // The user scope comes from the side file: only api@admin's write is refused.
  ASSERT_TRUE(by.count("|max_array_length|insert crm.people")) << render_text(*judged);
  EXPECT_EQ(by["|max_array_length|insert crm.people"]->requests,
            std::vector<RequestRef>{expected.refused[2]});
  // A warn rule's match is counted, never refused.
  ASSERT_TRUE(by.count("reporter|max_array_length|insert crm.people")) << render_text(*judged);
  const Group& warned = *by["reporter|max_array_length|insert crm.people"];
  EXPECT_FALSE(warned.refused);
  EXPECT_EQ(warned.requests, std::vector<RequestRef>{expected.warned});
}

TEST_F(RecordingJudgeTest, ExamplesShowTypesUnlessValuesAreAsked) {
  record_workload();
  const auto rules = settings::load_config_file(config(kCandidate)).rules;
  auto hidden = judge_recording(dir_, rules, codec::kDefaultMaxMessageBytes, false);
  auto shown = judge_recording(dir_, rules, codec::kDefaultMaxMessageBytes, true);
  ASSERT_TRUE(hidden && shown);
  const std::string text = render_text(*hidden);
  EXPECT_EQ(text.find("xxxxxxxx"), std::string::npos) << text;
  EXPECT_NE(text.find("\"note\" : \"<string>\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"insert\" : \"orders\""), std::string::npos) << text;
  EXPECT_NE(render_text(*shown).find("xxxxxxxx"), std::string::npos);
}

TEST_F(RecordingJudgeTest, JsonListsEveryRefusalAndHtmlIsOnePageWithoutScript) {
  const Expected expected = record_workload();
  const auto rules = settings::load_config_file(config(kCandidate)).rules;
  auto judged = judge_recording(dir_, rules, codec::kDefaultMaxMessageBytes, false);
  ASSERT_TRUE(judged);
  const std::string json_text = render_json(*judged);
  std::string refused = "\"refused\":[";
  for (size_t i = 0; i < expected.refused.size(); ++i) {
    if (i > 0) refused += ",";
    refused += "{\"connection\":" + std::to_string(expected.refused[i].connection) +
               ",\"order\":" + std::to_string(expected.refused[i].order) + "}";
  }
  EXPECT_NE(json_text.find(refused + "]"), std::string::npos) << json_text;
  EXPECT_NE(json_text.find("\"outcome\":\"warned\""), std::string::npos);
  const std::string html = render_html(*judged);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("require_index"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST_F(RecordingJudgeTest, IndexesComeFromADumpAsFromIntrospection) {
  start(1);
  request(1, op_msg(R"({"find": "orders", "filter": {"customerId": 7}, "$db": "shop"})", 1));
  const uint64_t unindexed =
      request(1, op_msg(R"({"find": "orders", "filter": {"total": 7}, "$db": "shop"})", 2));
  files_->close();
  const auto rules = settings::load_config_file(config(kCandidate)).rules;
  // Nobody listed shop.orders' indexes: unknown, never refused.
  auto unknown = judge_recording(dir_, rules, codec::kDefaultMaxMessageBytes, false);
  ASSERT_TRUE(unknown) << unknown.error().message;
  EXPECT_TRUE(unknown->refused.empty()) << render_text(*unknown);
  // The dump lists _id_ and customerId_1.
  auto known =
      judge_recording(dir_, rules, codec::kDefaultMaxMessageBytes, false,
                      std::string(DOCGUARD_SOURCE_DIR) + "/tests/fixtures/dumps/shop/dir-gzip");
  ASSERT_TRUE(known) << known.error().message;
  EXPECT_EQ(known->refused, (std::vector<RequestRef>{{1, unindexed}})) << render_text(*known);
  auto missing = judge_recording(dir_, rules, codec::kDefaultMaxMessageBytes, false,
                                 (dir_ / "no-dump").string());
  EXPECT_FALSE(missing);
}

TEST_F(RecordingJudgeTest, ExitCodeSaysWhetherAnythingWouldBeRefused) {
  record_workload();
  const std::string out = dir_.string() + ".out";
  EXPECT_EQ(run(config(kCandidate), dir_, "text", out), 1);
  EXPECT_EQ(run(config(kPermissive), dir_, "json", out), 0);
  EXPECT_EQ(run(config(kPermissive), dir_ / "missing", "text", out), 2);
  EXPECT_EQ(run(dir_.string() + ".nowhere.yaml", dir_, "text", out), 2);
  fs::remove(out);
  fs::remove(dir_.string() + ".yaml");
}

}  // namespace
}  // namespace docguard::tools::whatif
