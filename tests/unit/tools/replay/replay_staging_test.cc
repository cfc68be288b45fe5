// What keeps a replay from harming staging: the selection of requests (and its option values),
// stopping on a failing target, and recognising the recording's own source.
#include <gtest/gtest.h>

#include "docguard/codec/op_msg.h"
#include "replay/replay_abort.h"
#include "replay/replay_selection.h"
#include "replay/replay_source.h"
#include "test_messages.h"

namespace docguard::tools {
namespace {

recording::RecordedPacket request(const char* body, int32_t id, uint64_t offset_micros,
                                  const char* app, const char* command, const char* ns) {
  recording::RecordedPacket p;
  p.event = codec::RecordedEvent::kRequest;
  p.connection = 1;
  p.offset_micros = offset_micros;
  p.message = testing::op_msg(body, id);
  p.side.app = app;
  p.side.command = command;
  p.side.ns = ns;
  return p;
}

recording::RecordedPacket reply(const char* body, int32_t response_to) {
  recording::RecordedPacket p;
  p.event = codec::RecordedEvent::kResponse;
  p.connection = 1;
  p.message =
      codec::OpMsgBuilder(response_to + 1000, response_to).body(testing::json(body).get()).finish();
  return p;
}

TEST(ReplayOptionValues, DurationsAndTimeBounds) {
  double v = 0;
  bool absolute = true;
  EXPECT_TRUE(parse_duration("90", v) && v == 90);
  EXPECT_TRUE(parse_duration("15m", v) && v == 900);
  EXPECT_TRUE(parse_duration("1.5h", v) && v == 5400);
  EXPECT_TRUE(parse_duration("2d", v) && v == 172800);
  for (const char* bad : {"", "h", "-1s", "0", "1x", "nan"}) EXPECT_FALSE(parse_duration(bad, v));
  EXPECT_TRUE(parse_time_bound("12.5", v, absolute));
  EXPECT_FALSE(absolute);
  EXPECT_EQ(v, 12.5);
  EXPECT_TRUE(parse_time_bound("1970-01-02T00:00:01Z", v, absolute));
  EXPECT_TRUE(absolute);
  EXPECT_EQ(v, 86401);
  EXPECT_TRUE(parse_time_bound("2026-12-07T21:15:00.250+01:00", v, absolute));
  EXPECT_DOUBLE_EQ(v, 1796674500.25);  // 20:15:00.25 UTC
  for (const char* bad : {"2026-12-07", "2026-12-07T21:15:00", "2026-13-07T21:15:00Z",
                          "2026-12-07T21:15:00Zjunk", "soon"}) {
    EXPECT_FALSE(parse_time_bound(bad, v, absolute)) << bad;
  }
}

TEST(ReplaySelection, AWindowThatEndsBeforeItBeginsIsRefused) {
  ReplaySelection s;
  s.from = "10";
  s.to = "5";
  const auto selection = RequestSelection::make(s, 0);
  ASSERT_FALSE(selection.ok());
  EXPECT_NE(selection.error().message.find("the window ends before it begins"), std::string::npos);
  s.to = "10";  // one instant: a window still
  EXPECT_TRUE(RequestSelection::make(s, 0).ok());
}

TEST(ReplaySelection, FactsAreAndedAndListsOred) {
  ReplaySelection s;
  s.apps = {"billing", "search"};
  s.namespaces = {"shop.*"};
  s.commands = {"find"};
  s.from = "1";
  s.to = "3";
  auto selection = RequestSelection::make(s, 0);
  ASSERT_TRUE(selection.ok());
  const char* find = R"({"find": "orders", "$db": "shop"})";
  EXPECT_TRUE(selection->matches(request(find, 1, 2'000'000, "search", "find", "shop.orders")));
  EXPECT_FALSE(selection->matches(request(find, 1, 2'000'000, "other", "find", "shop.orders")));
  EXPECT_FALSE(selection->matches(request(find, 1, 2'000'000, "search", "insert", "shop.orders")));
  EXPECT_FALSE(selection->matches(request(find, 1, 2'000'000, "search", "find", "crm.orders")));
  EXPECT_FALSE(selection->matches(request(find, 1, 500'000, "search", "find", "shop.orders")));
  EXPECT_FALSE(selection->matches(request(find, 1, 3'500'000, "search", "find", "shop.orders")));
  // An RFC 3339 bound is taken from the recording's start (its first file's name).
  ReplaySelection at;
  at.from = "1970-01-01T00:00:10Z";
  auto absolute = RequestSelection::make(at, 8'000);
  ASSERT_TRUE(absolute.ok());
  EXPECT_EQ(absolute->from_offset(), 2'000'000u);
  at.from = "yesterday";
  EXPECT_FALSE(RequestSelection::make(at, 0).ok());
}

TEST(ReplaySelection, AGetMoreFollowsTheRequestThatOpenedItsCursor) {
  ReplaySelection s;
  s.apps = {"wanted"};
  auto selection = RequestSelection::make(s, 0);
  ASSERT_TRUE(selection.ok());
  SelectionTracker tracker(*selection);
  // Left out: its cursor 77 and the getMore of it, though the getMore's own app is selected.
  EXPECT_FALSE(
      tracker.selects(request(R"({"find": "c", "$db": "d"})", 1, 0, "other", "find", "d.c")));
  tracker.on_reply(
      reply(R"({"cursor": {"id": {"$numberLong": "77"}, "firstBatch": []}, "ok": 1})", 1));
  EXPECT_FALSE(tracker.selects(
      request(R"({"getMore": {"$numberLong": "77"}, "collection": "c", "$db": "d"})", 2, 0,
              "wanted", "getMore", "d.c")));
  // Selected: its cursor 88 goes with it, though the getMore's own app is not.
  EXPECT_TRUE(
      tracker.selects(request(R"({"find": "c", "$db": "d"})", 3, 0, "wanted", "find", "d.c")));
  tracker.on_reply(
      reply(R"({"cursor": {"id": {"$numberLong": "88"}, "firstBatch": []}, "ok": 1})", 3));
  EXPECT_TRUE(tracker.selects(
      request(R"({"killCursors": "c", "cursors": [{"$numberLong": "88"}], "$db": "d"})", 4, 0,
              "other", "killCursors", "d.c")));
}

ReplayOptions abort_options(double rate, size_t window, double latency_ms) {
  ReplayOptions o;
  o.abort_error_rate = rate;
  o.abort_window = window;
  o.abort_latency_ms = latency_ms;
  return o;
}

TEST(AbortWatch, StopsWhenTheWindowsErrorsReachTheRate) {
  AbortWatch watch(abort_options(0.5, 4, 0));
  watch.add(true, false, 0);
  watch.add(true, false, 0);
  watch.add(true, false, 0);
  EXPECT_FALSE(watch.stopped());  // judged over a whole window only
  watch.add(false, true, 10);
  ASSERT_TRUE(watch.stopped());
  EXPECT_EQ(watch.result()->after_requests, 4u);
  EXPECT_NE(watch.result()->reason.find("3 of the last 4 requests failed"), std::string::npos)
      << watch.result()->reason;
}

// Whether a live reply fails where the recorded one (JSON, or nullptr for none) did not.
bool failed(const char* recorded, const char* live, bool is_write = true) {
  const testing::Bson live_doc(live);
  if (recorded == nullptr) return replayed_reply_failed({}, live_doc.view(), is_write);
  const testing::Bson recorded_doc(recorded);
  return replayed_reply_failed(recorded_doc.view(), live_doc.view(), is_write);
}

TEST(AbortWatch, WriteErrorsAndFewerWritesCountAsErrors) {
  // An insert that fails statement by statement still answers ok: 1.
  EXPECT_TRUE(failed(R"({"n": 1, "ok": 1})",
                     R"({"n": 0, "writeErrors": [{"index": 0, "code": 11000}], "ok": 1})"));
  EXPECT_FALSE(failed(R"({"n": 0, "writeErrors": [{"index": 0, "code": 11000}], "ok": 1})",
                      R"({"n": 0, "writeErrors": [{"index": 0, "code": 11000}], "ok": 1})"));
  EXPECT_TRUE(failed(R"({"n": 0, "writeErrors": [{"index": 0, "code": 11000}], "ok": 1})",
                     R"({"n": 0, "writeErrors": [{"index": 0, "code": 11000},
                                                 {"index": 1, "code": 11000}], "ok": 1})"));
  EXPECT_TRUE(
      failed(R"({"n": 1, "ok": 1})", R"({"n": 1, "writeConcernError": {"code": 64}, "ok": 1})"));
  EXPECT_TRUE(failed(R"({"n": 5, "ok": 1})", R"({"n": 3, "ok": 1})"));
  EXPECT_FALSE(failed(R"({"n": 5, "ok": 1})", R"({"n": 3, "ok": 1})", false));  // a count
  EXPECT_FALSE(failed(R"({"n": 3, "ok": 1})", R"({"n": 5, "ok": 1})"));
  EXPECT_TRUE(failed(R"({"ok": 1})", R"({"ok": 0, "code": 2})"));
  EXPECT_FALSE(failed(R"({"ok": 0, "code": 2})", R"({"ok": 0, "code": 2})"));
  EXPECT_FALSE(failed(nullptr, R"({"ok": 0, "code": 2})"));  // nothing recorded to judge by
}

TEST(AbortWatch, AWindowBelowTheRateGoesOn) {
  AbortWatch watch(abort_options(0.5, 4, 0));
  for (int i = 0; i < 40; ++i) watch.add(i % 4 == 0, true, 10);
  EXPECT_FALSE(watch.stopped());
  EXPECT_FALSE(watch.result().has_value());
}

TEST(AbortWatch, StopsWhenTheMedianLatencyIsAboveTheBound) {
  AbortWatch watch(abort_options(0.5, 3, 5));
  watch.add(false, true, 1'000);
  watch.add(false, true, 9'000);
  watch.add(false, true, 2'000);
  EXPECT_FALSE(watch.stopped());  // median 2 ms
  watch.add(false, true, 8'000);  // window 9, 2, 8: median 8 ms
  ASSERT_TRUE(watch.stopped());
  EXPECT_NE(watch.result()->reason.find("median replayed latency"), std::string::npos);
}

TEST(ReplaySource, AnAddressIsTheSourceByAnySpelling) {
  RecordedSource source;
  source.upstreams = {"localhost:27017", "127.0.0.1:27017"};
  EXPECT_NE(address_in_common(source, "mongodb://127.0.0.1:27017"), "");
  EXPECT_NE(address_in_common(source, "mongodb://localhost"), "");  // the default port
  EXPECT_NE(address_in_common(source, "mongodb://127.0.0.2:27017,other.invalid:1"), "");
  EXPECT_EQ(address_in_common(source, "mongodb://127.0.0.1:27018"), "");
  EXPECT_EQ(address_in_common(source, "mongodb://staging.invalid:27017"), "");
  EXPECT_EQ(address_in_common(RecordedSource{}, "mongodb://127.0.0.1:27017"), "");
}

TEST(ReplaySource, AHelloIsTheSourceBySetAndMemberOrByProcess) {
  RecordedSource source;
  source.identities.push_back({"rs0", {"db1:27017", "db2:27017"}, "65a1b2c3d4e5f60718293a4b"});
  EXPECT_NE(identity_in_common(source, {"rs0", {"db2:27017", "db3:27017"}, ""}), "");
  EXPECT_NE(identity_in_common(source, {"", {}, "65a1b2c3d4e5f60718293a4b"}), "");
  // A set of the same name elsewhere (staging named like production) is another cluster.
  EXPECT_EQ(identity_in_common(source, {"rs0", {"stage1:27017"}, "75a1b2c3d4e5f60718293a4b"}), "");
  EXPECT_EQ(identity_in_common(source, {"rs1", {"db1:27017"}, ""}), "");
  EXPECT_EQ(identity_in_common(source, {}), "");
}

TEST(ReplaySource, AHelloIsTheSourceByTheClustersSigningKey) {
  // A mongos, or a member not in the recorded hosts list: the same cluster by its keyId.
  RecordedSource source;
  source.identities.push_back({"", {}, "", 7301234567890123777});
  const std::string matched = identity_in_common(source, {"", {}, "", 7301234567890123777});
  EXPECT_NE(matched.find("keyId 7301234567890123777"), std::string::npos) << matched;
  EXPECT_EQ(identity_in_common(source, {"", {}, "", 7301234567890123778}), "");
  // No key on either side (a standalone) matches nothing.
  source.identities = {{"", {}, "", 0}};
  EXPECT_EQ(identity_in_common(source, {"", {}, "", 0}), "");
}

}  // namespace
}  // namespace docguard::tools
