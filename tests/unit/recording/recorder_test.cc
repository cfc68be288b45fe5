// The recorder without sockets: what it admits (filters, sample), that a full queue fails the
// recording without blocking, and that start/stop leave complete files behind.
#include "docguard/recording/recorder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "docguard/recording/recording_reader.h"
#include "test_messages.h"

namespace docguard::recording {
namespace {

namespace fs = std::filesystem;

class RecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("docguard-recorder-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    settings_.directory = dir_.string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  size_t packets_on_disk() const {
    size_t n = 0;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      if (entry.path().extension() != ".bin") continue;
      std::ifstream in(entry.path(), std::ios::binary);
      std::vector<uint8_t> b{std::istreambuf_iterator<char>(in), {}};
      for (size_t at = 0; at + 4 <= b.size(); ++n) at += codec::load_le32(b.data() + at);
    }
    return n;
  }

  telemetry::Metrics metrics_;
  settings::RecordingSettings settings_;
  fs::path dir_;
};

TEST_F(RecorderTest, RecordsRequestsRepliesAndSessionEvents) {
  Recorder recorder(metrics_, codec::kDefaultMaxMessageBytes);
  EXPECT_FALSE(recorder.active());
  ASSERT_TRUE(recorder.start(settings_));
  EXPECT_TRUE(recorder.active());
  EXPECT_FALSE(recorder.start(settings_));  // one at a time
  RecordingTap tap;
  const auto find = testing::op_msg(R"({"find": "c", "$db": "d"})", 5);
  recorder.on_request(tap, "peer", find, {"app", "", "find", "forwarded"});
  const auto reply = codec::OpMsgBuilder(6, 5).body(testing::json(R"({"ok": 1})").get()).finish();
  recorder.on_reply(tap, "peer", reply, {"app", "", {}, {}});
  recorder.on_session_end(tap, "peer");
  EXPECT_TRUE(recorder.stop());
  EXPECT_FALSE(recorder.active());
  EXPECT_FALSE(recorder.stop());
  EXPECT_EQ(packets_on_disk(), 4u);  // start, request, reply, end
  EXPECT_NE(recorder.status_json().find("\"state\":\"stopped\""), std::string::npos);
  EXPECT_NE(recorder.status_json().find("\"packets\":4"), std::string::npos);
}

TEST_F(RecorderTest, SideFileNamesTheDecidingRuleAndMarksRefusals) {
  Recorder recorder(metrics_, codec::kDefaultMaxMessageBytes);
  ASSERT_TRUE(recorder.start(settings_));
  RecordingTap tap;
  const auto insert = testing::op_msg(R"({"insert": "c", "$db": "d", "documents": [{}]})", 5);
  recorder.on_request(tap, "p", insert,
                      {"app", "", "insert", "answered_by_docguard", "max_document_bytes", true});
  recorder.on_request(tap, "p", insert, {"app", "", "insert", "forwarded", "max_array_length"});
  recorder.on_request(tap, "p", insert, {"app", "", "insert", "forwarded"});
  EXPECT_TRUE(recorder.stop());
  std::vector<std::string> requests;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    if (entry.path().string().ends_with(".docguard.jsonl")) {
      std::ifstream in(entry.path());
      for (std::string line; std::getline(in, line);) {
        if (line.find("\"event\":\"request\"") != std::string::npos) requests.push_back(line);
      }
    }
  }
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_NE(requests[0].find(R"("verdict":"answered_by_docguard","rule":"max_document_bytes",)"
                             R"("refused":true)"),
            std::string::npos)
      << requests[0];
  // A warning names its rule and is not refused; a request that broke none has neither.
  EXPECT_NE(requests[1].find(R"("rule":"max_array_length")"), std::string::npos) << requests[1];
  EXPECT_EQ(requests[1].find("refused"), std::string::npos) << requests[1];
  EXPECT_EQ(requests[2].find("rule"), std::string::npos) << requests[2];
}

TEST_F(RecorderTest, SideFileGivesEachRequestItsShapeWithoutValues) {
  Recorder recorder(metrics_, codec::kDefaultMaxMessageBytes);
  ASSERT_TRUE(recorder.start(settings_));
  RecordingTap tap;
  const auto find = testing::op_msg(
      R"({"find": "orders", "$db": "shop", "filter": {"status": "secret-A", "qty": {"$gt": 5}},)"
      R"( "sort": {"created": -1}})",
      1);
  recorder.on_request(tap, "p", find, {"app", "", "find", "forwarded"});
  EXPECT_TRUE(recorder.stop());
  std::string line;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    if (!entry.path().string().ends_with(".docguard.jsonl")) continue;
    std::ifstream in(entry.path());
    for (std::string l; std::getline(in, l);) {
      if (l.find("\"event\":\"request\"") != std::string::npos) line = l;
    }
  }
  // The replay's comparison and the what-if report group by the same text.
  EXPECT_NE(line.find(R"("shape":"find shop.orders {)"), std::string::npos) << line;
  EXPECT_NE(line.find("status"), std::string::npos) << line;
  EXPECT_NE(line.find("created"), std::string::npos) << line;
  EXPECT_EQ(line.find("secret-A"), std::string::npos) << line;
}

TEST_F(RecorderTest, FiltersByAppUserAndNamespace) {
  settings_.apps = {"billing"};
  settings_.users = {"alice"};
  settings_.namespaces = {"shop.*"};
  Recorder recorder(metrics_, codec::kDefaultMaxMessageBytes);
  ASSERT_TRUE(recorder.start(settings_));
  RecordingTap tap;
  const auto in_shop = testing::op_msg(R"({"find": "orders", "$db": "shop"})", 1);
  const auto elsewhere = testing::op_msg(R"({"find": "orders", "$db": "crm"})", 2);
  recorder.on_request(tap, "p", in_shop, {"other-app", "alice@admin", "find", ""});
  recorder.on_request(tap, "p", in_shop, {"billing", "bob@admin", "find", ""});
  recorder.on_request(tap, "p", elsewhere, {"billing", "alice@admin", "find", ""});
  recorder.on_request(tap, "p", in_shop, {"billing", "alice@admin", "find", ""});
  // Only the reply to the request recorded.
  const auto to_crm = codec::OpMsgBuilder(9, 2).body(testing::json(R"({"ok": 1})").get()).finish();
  const auto to_shop =
      codec::OpMsgBuilder(10, 1).body(testing::json(R"({"ok": 1})").get()).finish();
  recorder.on_reply(tap, "p", to_crm, {"billing", "alice@admin", {}, {}});
  recorder.on_reply(tap, "p", to_shop, {"billing", "alice@admin", {}, {}});
  recorder.stop();
  EXPECT_EQ(packets_on_disk(), 4u);  // start, the request, its reply, the end at stop
}

TEST_F(RecorderTest, ASampleRecordsAShareOfTheConnections) {
  settings_.sample = 0.5;
  Recorder recorder(metrics_, codec::kDefaultMaxMessageBytes);
  ASSERT_TRUE(recorder.start(settings_));
  const auto ping = testing::op_msg(R"({"ping": 1, "$db": "admin"})");
  std::vector<RecordingTap> taps(200);
  for (auto& tap : taps) recorder.on_request(tap, "p", ping, {});
  recorder.stop();
  size_t sampled = 0;
  for (const auto& tap : taps) sampled += tap.sampled ? 1 : 0;
  EXPECT_GT(sampled, 60u);
  EXPECT_LT(sampled, 140u);
  EXPECT_EQ(packets_on_disk(), sampled * 3);  // start, ping, end
}

TEST_F(RecorderTest, AFullQueueFailsTheRecordingAndTrafficIsNotHeld) {
  settings_.queue_bytes = 1024;
  Recorder recorder(metrics_, codec::kDefaultMaxMessageBytes);
  ASSERT_TRUE(recorder.start(settings_));
  RecordingTap tap;
  const std::string big(400, 'x');
  const auto insert =
      testing::op_msg((R"({"insert": "c", "$db": "d", "pad": ")" + big + R"("})").c_str());
  int handed = 0;
  while (recorder.active() && handed < 1000) {
    recorder.on_request(tap, "p", insert, {});
    ++handed;
  }
  EXPECT_FALSE(recorder.active());
  const std::string status = recorder.status_json();
  EXPECT_NE(status.find("\"state\":\"failed\""), std::string::npos) << status;
  EXPECT_NE(status.find("queue"), std::string::npos) << status;
  EXPECT_NE(status.find("\"dropped\":1"), std::string::npos) << status;
  EXPECT_EQ(metrics_.recording_dropped.Value(), 1.0);
  EXPECT_EQ(metrics_.recording_failures.get("queue_full").Value(), 1.0);
  // A new recording may start after a failed one.
  settings_.queue_bytes = 1 << 20;
  EXPECT_TRUE(recorder.start(settings_));
  EXPECT_TRUE(recorder.stop());
}

TEST_F(RecorderTest, MaxDurationEndsTheRecording) {
  settings_.max_duration = std::chrono::milliseconds(50);
  Recorder recorder(metrics_, codec::kDefaultMaxMessageBytes);
  ASSERT_TRUE(recorder.start(settings_));
  for (int i = 0; i < 100 && recorder.active(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(recorder.active());
  EXPECT_NE(recorder.status_json().find("max_duration"), std::string::npos);
}

TEST_F(RecorderTest, SessionsOnManyThreadsKeepTheirOrderAndNothingIsLost) {
  Recorder recorder(metrics_, codec::kDefaultMaxMessageBytes);
  ASSERT_TRUE(recorder.start(settings_));
  constexpr int kThreads = 4;
  constexpr int kMessages = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&recorder] {
      RecordingTap tap;
      for (int i = 1; i <= kMessages; ++i) {
        const auto ping = testing::op_msg(R"({"ping": 1, "$db": "admin"})", i);
        recorder.on_request(tap, "p", ping, {});
      }
      recorder.on_session_end(tap, "p");
    });
  }
  for (int i = 0; i < 50; ++i) (void)recorder.status_json();  // read while they write
  for (auto& t : threads) t.join();
  recorder.stop();
  EXPECT_EQ(packets_on_disk(), static_cast<size_t>(kThreads * (kMessages + 2)));
  // Within each connection the request ids (1, 2, ...) come in the order they were sent.
  std::map<uint64_t, int32_t> last;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    if (entry.path().extension() != ".bin") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::vector<uint8_t> b{std::istreambuf_iterator<char>(in), {}};
    for (size_t at = 0; at + 4 <= b.size(); at += codec::load_le32(b.data() + at)) {
      if (b[at + 4] != 0) continue;  // requests only
      uint64_t connection = 0;
      std::memcpy(&connection, b.data() + at + 5, 8);
      const size_t message = at + 13 + 2 + 16;  // session "p" and its NUL, offset, order
      const int32_t id = codec::load_le32(b.data() + message + 4);
      EXPECT_EQ(id, last[connection] + 1);
      last[connection] = id;
    }
  }
  EXPECT_EQ(last.size(), static_cast<size_t>(kThreads));
}

// Which cluster the traffic went to: the upstream on each connection's session_start line, and
// the identity of the upstream's hello reply as it came (before any rewrite), written once.
TEST_F(RecorderTest, SideFileNamesTheUpstreamAndTheClusterItsHelloGave) {
  Recorder recorder(metrics_, codec::kDefaultMaxMessageBytes);
  ASSERT_TRUE(recorder.start(settings_));
  const char* hello_reply =
      R"({"isWritablePrimary": true, "setName": "rs0", "hosts": ["db1:27017", "db2:27017"],)"
      R"( "topologyVersion": {"processId": {"$oid": "65a1b2c3d4e5f60718293a4b"}, "counter": 6},)"
      R"( "ok": 1, "$clusterTime": {"clusterTime": {"$timestamp": {"t": 1, "i": 1}},)"
      R"( "signature": {"hash": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAAAAAAA=",)"
      R"( "subType": "00"}}, "keyId": {"$numberLong": "7301234567890123777"}}}})";
  {
    // A hello docguard answered itself: its reply names docguard's persona, not the upstream.
    RecordingTap tap;
    recorder.on_request(tap, "p", testing::op_msg(R"({"hello": 1, "$db": "admin"})", 3),
                        {"app", "", "hello", "answered_by_docguard"});
    recorder.on_reply(tap, "p",
                      codec::OpMsgBuilder(4, 3)
                          .body(testing::json(R"({"setName": "docguard", "ok": 1})").get())
                          .finish(),
                      {"app", "", {}, {}});
  }
  for (int connection = 0; connection < 2; ++connection) {
    RecordingTap tap;
    RecordedFacts facts{"app", "", "hello", "forwarded"};
    facts.upstream = "db1:27017";
    facts.upstream_resolved = "10.0.0.1:27017";
    recorder.on_request(tap, "p", testing::op_msg(R"({"hello": 1, "$db": "admin"})", 7), facts);
    const auto reply = codec::OpMsgBuilder(8, 7).body(testing::json(hello_reply).get()).finish();
    recorder.on_reply(tap, "p", reply, facts);
    // A reply to another request names no cluster, whatever it holds.
    recorder.on_request(tap, "p", testing::op_msg(R"({"find": "c", "$db": "d"})", 9), facts);
    recorder.on_reply(tap, "p",
                      codec::OpMsgBuilder(10, 9).body(testing::json(hello_reply).get()).finish(),
                      facts);
  }
  EXPECT_TRUE(recorder.stop());
  auto reader = RecordingReader::open(dir_);
  ASSERT_TRUE(reader.ok());
  int starts = 0;
  int sources = 0;
  while (true) {
    auto packet = reader->next();
    ASSERT_TRUE(packet.ok());
    if (!packet->has_value()) break;
    const SideFacts& side = (*packet)->side;
    if ((*packet)->event == RecordedEvent::kSessionStart && !side.upstream.empty()) {
      ++starts;
      EXPECT_EQ(side.upstream, "db1:27017");
      EXPECT_EQ(side.upstream_resolved, "10.0.0.1:27017");
    }
    if (side.source.empty()) continue;
    ++sources;
    EXPECT_EQ((*packet)->event, RecordedEvent::kResponse);
    EXPECT_EQ(side.source.set_name, "rs0");
    EXPECT_EQ(side.source.hosts, (std::vector<std::string>{"db1:27017", "db2:27017"}));
    EXPECT_EQ(side.source.process_id, "65a1b2c3d4e5f60718293a4b");
    EXPECT_EQ(side.source.key_id, 7301234567890123777);  // the cluster's signing key
  }
  EXPECT_EQ(starts, 2);
  EXPECT_EQ(sources, 1);  // the second connection's hello gave the same cluster
}

}  // namespace
}  // namespace docguard::recording

namespace docguard::recording {
namespace {

// The bytes of every packet file of a recording, one string.
std::string recorded_bytes(const fs::path& dir) {
  std::string all;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".bin") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    all.append(std::istreambuf_iterator<char>(in), {});
  }
  return all;
}

std::vector<uint8_t> reply_to(int32_t request_id, const char* body) {
  return codec::OpMsgBuilder(request_id + 1000, request_id)
      .body(testing::json(body).get())
      .finish();
}

// An aggregate that joins a secret namespace is sensitive, and so is its cursor: the getMores
// (on any connection) and their replies are redacted as it was, until the cursor is exhausted
// or killed. The server refuses nothing here: the messages are written by hand.
TEST_F(RecorderTest, ASensitiveRequestsCursorStaysSensitiveUntilItEnds) {
  settings_.redaction.namespaces = {"hr.*"};
  Recorder recorder(metrics_, codec::kDefaultMaxMessageBytes);
  ASSERT_TRUE(recorder.start(settings_));
  RecordingTap tap;
  RecordingTap other;
  const auto aggregate = testing::op_msg(
      R"({"aggregate": "people", "pipeline": [{"$lookup": {"from": "salaries", "localField": "name",
          "foreignField": "who", "as": "pay"}}], "cursor": {"batchSize": 1}, "$db": "hr"})",
      10);
  recorder.on_request(tap, "p", aggregate, {});
  recorder.on_reply(tap, "p", reply_to(10, R"({"cursor": {"id": {"$numberLong": "4242"},
      "ns": "shop.people", "firstBatch": [{"pay": [{"amount": "FIRST-SALARY"}]}]}, "ok": 1})"),
                    {});
  // The next batch, asked for on another connection.
  recorder.on_request(other, "p",
                      testing::op_msg(R"({"getMore": {"$numberLong": "4242"}, "collection":
                          "people", "$db": "shop"})",
                                      11),
                      {});
  recorder.on_reply(other, "p", reply_to(11, R"({"cursor": {"id": {"$numberLong": "4242"},
      "ns": "shop.people", "nextBatch": [{"pay": [{"amount": "NEXT-SALARY"}]}]}, "ok": 1})"),
                    {});
  // The last batch: the cursor ends, and is forgotten.
  recorder.on_request(tap, "p",
                      testing::op_msg(R"({"getMore": {"$numberLong": "4242"}, "collection":
                          "people", "$db": "shop"})",
                                      12),
                      {});
  recorder.on_reply(tap, "p", reply_to(12, R"({"cursor": {"id": {"$numberLong": "0"},
      "ns": "shop.people", "nextBatch": [{"pay": [{"amount": "LAST-SALARY"}]}]}, "ok": 1})"),
                    {});
  // A cursor of an ordinary request, and one killed: a getMore on an unknown cursor is recorded.
  recorder.on_request(tap, "p",
                      testing::op_msg(R"({"getMore": {"$numberLong": "4242"}, "collection":
                          "people", "$db": "shop"})",
                                      13),
                      {});
  recorder.on_reply(tap, "p", reply_to(13, R"({"cursor": {"id": {"$numberLong": "0"},
      "ns": "shop.people", "nextBatch": [{"name": "ORDINARY-VALUE"}]}, "ok": 1})"),
                    {});
  recorder.on_request(tap, "p", aggregate, {});  // id 10 again: a second cursor, then killed
  recorder.on_reply(tap, "p", reply_to(10, R"({"cursor": {"id": {"$numberLong": "77"},
      "ns": "shop.people", "firstBatch": []}, "ok": 1})"),
                    {});
  recorder.on_request(tap, "p",
                      testing::op_msg(R"({"killCursors": "people", "cursors":
                          [{"$numberLong": "77"}], "$db": "shop"})",
                                      14),
                      {});
  recorder.on_reply(tap, "p", reply_to(14, R"({"cursorsKilled": [{"$numberLong": "77"}],
      "ok": 1})"),
                    {});
  recorder.on_request(tap, "p",
                      testing::op_msg(R"({"getMore": {"$numberLong": "77"}, "collection":
                          "people", "$db": "shop"})",
                                      15),
                      {});
  recorder.on_reply(tap, "p", reply_to(15, R"({"cursor": {"id": {"$numberLong": "0"},
      "ns": "shop.people", "nextBatch": [{"name": "AFTER-KILL"}]}, "ok": 1})"),
                    {});
  EXPECT_TRUE(recorder.stop());
  const std::string bytes = recorded_bytes(dir_);
  EXPECT_EQ(bytes.find("FIRST-SALARY"), std::string::npos);
  EXPECT_EQ(bytes.find("NEXT-SALARY"), std::string::npos);
  EXPECT_EQ(bytes.find("LAST-SALARY"), std::string::npos);
  EXPECT_NE(bytes.find("ORDINARY-VALUE"), std::string::npos);  // the cursor was forgotten
  EXPECT_NE(bytes.find("AFTER-KILL"), std::string::npos);
  EXPECT_NE(bytes.find("shop.people"), std::string::npos);  // the cursor's namespace stays
}

// An exhaust getMore's replies after the first answer the previous reply's request id, not a
// request: a sensitive one passes its sensitivity on along the chain, to the last batch (cursor
// id 0). A reply naming a sensitive cursor is kept to its status whatever it answers.
TEST_F(RecorderTest, AnExhaustCursorsRepliesStaySensitiveToTheLast) {
  settings_.redaction.namespaces = {"hr.*"};
  Recorder recorder(metrics_, codec::kDefaultMaxMessageBytes);
  ASSERT_TRUE(recorder.start(settings_));
  RecordingTap tap;
  recorder.on_request(tap, "p",
                      testing::op_msg(R"({"find": "salaries", "batchSize": 1,
      "$db": "hr"})",
                                      20),
                      {});
  recorder.on_reply(tap, "p", reply_to(20, R"({"cursor": {"id": {"$numberLong": "5151"},
      "ns": "hr.salaries", "firstBatch": [{"amount": "FIRST-PAY"}]}, "ok": 1})"),
                    {});
  const auto exhaust_reply = [](int32_t id, int32_t response_to, const char* body, bool more) {
    return codec::OpMsgBuilder(id, response_to, more ? codec::op_msg_flags::kMoreToCome : 0)
        .body(testing::json(body).get())
        .finish();
  };
  recorder.on_request(tap, "p",
                      codec::OpMsgBuilder(21, 0, codec::op_msg_flags::kExhaustAllowed)
                          .body(testing::json(R"({"getMore": {"$numberLong": "5151"},
                              "collection": "salaries", "$db": "shop"})")
                                    .get())
                          .finish(),
                      {});
  recorder.on_reply(tap, "p",
                    exhaust_reply(1021, 21, R"({"cursor": {"id": {"$numberLong":
      "5151"}, "ns": "shop.salaries", "nextBatch": [{"amount": "SECOND-PAY"}]}, "ok": 1})",
                                  true),
                    {});
  recorder.on_reply(tap, "p",
                    exhaust_reply(1022, 1021, R"({"cursor": {"id": {"$numberLong":
      "5151"}, "ns": "shop.salaries", "nextBatch": [{"amount": "THIRD-PAY"}]}, "ok": 1})",
                                  true),
                    {});
  recorder.on_reply(tap, "p",
                    exhaust_reply(1023, 1022, R"({"cursor": {"id": {"$numberLong":
      "0"}, "ns": "shop.salaries", "nextBatch": [{"amount": "LAST-PAY"}]}, "ok": 1})",
                                  false),
                    {});
  // The chain ends with the reply without moreToCome: the next reply is an ordinary one.
  recorder.on_request(tap, "p", testing::op_msg(R"({"find": "c", "$db": "shop"})", 22), {});
  recorder.on_reply(tap, "p", reply_to(22, R"({"cursor": {"id": {"$numberLong": "0"},
      "ns": "shop.c", "firstBatch": [{"name": "ORDINARY-VALUE"}]}, "ok": 1})"),
                    {});
  EXPECT_TRUE(recorder.stop());
  const std::string bytes = recorded_bytes(dir_);
  for (const char* secret : {"FIRST-PAY", "SECOND-PAY", "THIRD-PAY", "LAST-PAY"}) {
    EXPECT_EQ(bytes.find(secret), std::string::npos) << secret;
  }
  EXPECT_NE(bytes.find("ORDINARY-VALUE"), std::string::npos);
}

TEST_F(RecorderTest, AReplyNamingASensitiveCursorIsKeptToItsStatusWhateverItAnswers) {
  settings_.redaction.namespaces = {"hr.*"};
  Recorder recorder(metrics_, codec::kDefaultMaxMessageBytes);
  ASSERT_TRUE(recorder.start(settings_));
  RecordingTap tap;
  recorder.on_request(tap, "p",
                      testing::op_msg(R"({"find": "salaries", "batchSize": 1,
      "$db": "hr"})",
                                      30),
                      {});
  recorder.on_reply(tap, "p", reply_to(30, R"({"cursor": {"id": {"$numberLong": "6161"},
      "ns": "hr.salaries", "firstBatch": []}, "ok": 1})"),
                    {});
  // A reply to a request the recording never saw, on the sensitive cursor.
  recorder.on_reply(tap, "p", reply_to(999, R"({"cursor": {"id": {"$numberLong": "6161"},
      "ns": "shop.salaries", "nextBatch": [{"amount": "UNSEEN-PAY"}]}, "ok": 1})"),
                    {});
  EXPECT_TRUE(recorder.stop());
  EXPECT_EQ(recorded_bytes(dir_).find("UNSEEN-PAY"), std::string::npos);
}

}  // namespace
}  // namespace docguard::recording
