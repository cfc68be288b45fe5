// The proxy's sections of the live report (admin/): the workload ledger, the candidate rules'
// verdicts and the validators' census, each added as members of /report.json and as a table in
// /report's HTML, from data built by hand.
#include <bson/bson.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "docguard/proxy/admin_server.h"

namespace docguard::proxy {
namespace {

// The section's JSON members as an object of their own, as the report adds them.
std::string members_json(const advisor::ReportSection& section) {
  json::Writer w;
  w.begin_object();
  for (const auto& [name, value] : section.json_members) w.key(name).raw(value);
  w.end_object();
  return w.take();
}

// A parsed JSON document, destroyed with the test's scope (a unique_ptr<bson_t> would drop
// bson_t's alignment attribute).
class Bson {
 public:
  explicit Bson(bson_t* b) : b_(b) {}
  ~Bson() {
    if (b_ != nullptr) bson_destroy(b_);
  }
  Bson(const Bson&) = delete;
  Bson& operator=(const Bson&) = delete;
  Bson(Bson&& other) noexcept : b_(std::exchange(other.b_, nullptr)) {}
  const bson_t* get() const { return b_; }

 private:
  bson_t* b_;
};

Bson parse(const std::string& json) {
  bson_error_t error;
  bson_t* b = bson_new_from_json(reinterpret_cast<const uint8_t*>(json.data()),
                                 static_cast<ssize_t>(json.size()), &error);
  EXPECT_NE(b, nullptr) << error.message << "\n" << json;
  return Bson(b);
}

// The value at a dotted path ("workload.0.db"); none (and a failure) when there is none.
std::optional<bson_iter_t> at(const Bson& doc, const char* path) {
  bson_iter_t top, found;
  if (doc.get() == nullptr || !bson_iter_init(&top, doc.get()) ||
      !bson_iter_find_descendant(&top, path, &found)) {
    ADD_FAILURE() << "no " << path;
    return std::nullopt;
  }
  return found;
}

std::string text_at(const Bson& doc, const char* path) {
  auto it = at(doc, path);
  if (!it) return "";
  if (!BSON_ITER_HOLDS_UTF8(&*it)) {
    ADD_FAILURE() << path << " is not a string";
    return "";
  }
  return bson_iter_utf8(&*it, nullptr);
}

int64_t number_at(const Bson& doc, const char* path) {
  auto it = at(doc, path);
  if (!it) return -1;
  if (!BSON_ITER_HOLDS_INT32(&*it) && !BSON_ITER_HOLDS_INT64(&*it)) {
    ADD_FAILURE() << path << " is not an integer";
    return -1;
  }
  return bson_iter_as_int64(&*it);
}

bool bool_at(const Bson& doc, const char* path) {
  auto it = at(doc, path);
  if (!it) return false;
  if (!BSON_ITER_HOLDS_BOOL(&*it)) {
    ADD_FAILURE() << path << " is not a boolean";
    return false;
  }
  return bson_iter_bool(&*it);
}

bson_type_t type_at(const Bson& doc, const char* path) {
  auto it = at(doc, path);
  return it ? bson_iter_type(&*it) : BSON_TYPE_EOD;
}

// The keys of the document or array at `path`, in order.
std::vector<std::string> keys_at(const Bson& doc, const char* path) {
  std::vector<std::string> keys;
  auto it = at(doc, path);
  bson_iter_t child;
  if (!it) return keys;
  if (!bson_iter_recurse(&*it, &child)) {
    ADD_FAILURE() << path << " is not a document";
    return keys;
  }
  while (bson_iter_next(&child)) keys.emplace_back(bson_iter_key(&child));
  return keys;
}

rules::WorkloadShape shape(std::string db, std::string collection, std::string command,
                           std::string text) {
  auto info = std::make_shared<rules::ShapeInfo>();
  info->db = std::move(db);
  info->collection = std::move(collection);
  info->command = std::move(command);
  info->shape = std::move(text);
  rules::WorkloadShape s;
  s.info = std::move(info);
  return s;
}

// Three shapes, heaviest first as the ledger gives them: one not indexed (with the index it
// needs), one indexed, one not known; and an overflow.
rules::WorkloadSnapshot snapshot() {
  rules::WorkloadSnapshot w;
  w.max_shapes = 3;
  w.overflow = {7, 20'000'000};

  auto a = shape("shop", "orders", "find", "{status: ?, createdAt: {$gt: ?}} sort {createdAt: -1}");
  a.stats.count = 100;
  a.stats.micros = 12'345'678;
  a.stats.documents = 250;
  a.stats.errors = 2;
  a.stats.verdicts = {90, 6, 3, 1};
  // 99 operations within 1023 us and one slow one: the p99 is the 99th.
  for (int i = 0; i < 99; ++i) a.stats.latency.add(1023);
  a.stats.latency.add(65535);
  a.stats.apps = {{"billing", 60, 8'000'000}, {"", 40, 4'345'678}};
  a.indexed = 0;
  a.index = {{"status", "1"}, {"createdAt", "-1"}, {"loc", "2dsphere"}};

  auto b = shape("shop", "users", "update", "{email: ?}");
  b.stats.count = 5;
  b.stats.micros = 4'500;
  b.stats.latency.add(7);
  b.stats.apps = {{"signup", 5, 4'500}};
  b.indexed = 1;

  auto c = shape("shop", "<items>", "aggregate", "{sku: ?}");
  c.stats.count = 1;
  c.stats.micros = 3;
  c.stats.apps = {{"<script>", 1, 3}};
  c.indexed = -1;

  w.shapes = {std::move(a), std::move(b), std::move(c)};
  return w;
}

TEST(WorkloadJson, EveryShapeInOrderWithItsCountsAppsAndIndex) {
  const auto doc = parse(members_json(workload_section(snapshot())));
  EXPECT_EQ(keys_at(doc, "workload"), (std::vector<std::string>{"0", "1", "2"}));

  EXPECT_EQ(keys_at(doc, "workload.0"),
            (std::vector<std::string>{"db", "collection", "command", "shape", "count",
                                      "total_micros", "p99_micros", "documents", "errors",
                                      "unserved", "verdicts", "apps", "indexed", "index"}));
  EXPECT_EQ(text_at(doc, "workload.0.db"), "shop");
  EXPECT_EQ(text_at(doc, "workload.0.collection"), "orders");
  EXPECT_EQ(text_at(doc, "workload.0.command"), "find");
  EXPECT_EQ(text_at(doc, "workload.0.shape"),
            "{status: ?, createdAt: {$gt: ?}} sort {createdAt: -1}");
  EXPECT_EQ(number_at(doc, "workload.0.count"), 100);
  EXPECT_EQ(number_at(doc, "workload.0.total_micros"), 12'345'678);
  EXPECT_EQ(number_at(doc, "workload.0.p99_micros"), 1023);
  EXPECT_EQ(number_at(doc, "workload.0.documents"), 250);
  EXPECT_EQ(number_at(doc, "workload.0.errors"), 2);
  EXPECT_EQ(keys_at(doc, "workload.0.verdicts"),
            (std::vector<std::string>{"passed", "warned", "blocked", "candidate"}));
  EXPECT_EQ(number_at(doc, "workload.0.verdicts.passed"), 90);
  EXPECT_EQ(number_at(doc, "workload.0.verdicts.warned"), 6);
  EXPECT_EQ(number_at(doc, "workload.0.verdicts.blocked"), 3);
  EXPECT_EQ(number_at(doc, "workload.0.verdicts.candidate"), 1);
  EXPECT_EQ(keys_at(doc, "workload.0.apps"), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(text_at(doc, "workload.0.apps.0.app"), "billing");
  EXPECT_EQ(number_at(doc, "workload.0.apps.0.count"), 60);
  EXPECT_EQ(number_at(doc, "workload.0.apps.0.total_micros"), 8'000'000);
  EXPECT_EQ(text_at(doc, "workload.0.apps.1.app"), "");
  EXPECT_EQ(number_at(doc, "workload.0.apps.1.count"), 40);
  EXPECT_FALSE(bool_at(doc, "workload.0.indexed"));
  // The index needed, as a document: directions as integers, named types as strings.
  EXPECT_EQ(keys_at(doc, "workload.0.index"),
            (std::vector<std::string>{"status", "createdAt", "loc"}));
  EXPECT_EQ(type_at(doc, "workload.0.index.status"), BSON_TYPE_INT32);
  EXPECT_EQ(number_at(doc, "workload.0.index.status"), 1);
  EXPECT_EQ(number_at(doc, "workload.0.index.createdAt"), -1);
  EXPECT_EQ(text_at(doc, "workload.0.index.loc"), "2dsphere");

  EXPECT_EQ(text_at(doc, "workload.1.command"), "update");
  EXPECT_EQ(number_at(doc, "workload.1.p99_micros"), 7);
  EXPECT_TRUE(bool_at(doc, "workload.1.indexed"));
  EXPECT_EQ(type_at(doc, "workload.1.index"), BSON_TYPE_NULL);

  EXPECT_EQ(text_at(doc, "workload.2.collection"), "<items>");
  EXPECT_EQ(number_at(doc, "workload.2.p99_micros"), 0);  // no reply timed
  EXPECT_EQ(type_at(doc, "workload.2.indexed"), BSON_TYPE_NULL);
  EXPECT_EQ(type_at(doc, "workload.2.index"), BSON_TYPE_NULL);

  EXPECT_EQ(keys_at(doc, "workload_overflow"),
            (std::vector<std::string>{"count", "total_micros", "max_shapes"}));
  EXPECT_EQ(number_at(doc, "workload_overflow.count"), 7);
  EXPECT_EQ(number_at(doc, "workload_overflow.total_micros"), 20'000'000);
  EXPECT_EQ(number_at(doc, "workload_overflow.max_shapes"), 3);
}

TEST(WorkloadJson, AnUnindexedShapeWithNoIndexToSuggestHasNone) {
  rules::WorkloadSnapshot w;
  w.shapes.push_back(shape("d", "c", "find", "{}"));
  w.shapes[0].indexed = 0;
  const auto doc = parse(members_json(workload_section(w)));
  EXPECT_FALSE(bool_at(doc, "workload.0.indexed"));
  EXPECT_EQ(type_at(doc, "workload.0.index"), BSON_TYPE_NULL);
  EXPECT_EQ(keys_at(doc, "workload.0.apps"), std::vector<std::string>{});
}

TEST(WorkloadJson, TheSectionsMembers) {
  const rules::WorkloadSnapshot empty;
  EXPECT_EQ(members_json(workload_section(empty)),
            R"({"workload":[],"workload_overflow":{"count":0,"total_micros":0,"max_shapes":0}})");
}

TEST(WorkloadHtml, ATableWithTheTextEscaped) {
  const std::string html = workload_section(snapshot()).html;
  EXPECT_EQ(html.rfind("<h2>Workload</h2>", 0), 0u) << html;
  EXPECT_TRUE(html.ends_with("</table>"));
  EXPECT_NE(html.find("the heaviest 3 kept; 7 operations (20.0 s) of other shapes"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<tr><td><code>{status: ?, createdAt: {$gt: ?}} sort {createdAt: -1}</code>"
                      "</td><td>shop.orders</td><td>find</td><td>100</td><td>12.3 s</td>"
                      "<td>1023 µs</td><td>billing (60), (no app name) (40)</td><td>no</td>"
                      "<td><code>{status: 1, createdAt: -1, loc: &quot;2dsphere&quot;}</code>"
                      "</td></tr>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<tr><td><code>{email: ?}</code></td><td>shop.users</td><td>update</td>"
                      "<td>5</td><td>4500 µs</td><td>7 µs</td><td>signup (5)</td><td>yes</td>"
                      "<td><code></code></td></tr>"),
            std::string::npos)
      << html;
  // The collection and app names are the clients': escaped.
  EXPECT_NE(html.find("<td>shop.&lt;items&gt;</td><td>aggregate</td><td>1</td><td>3 µs</td>"
                      "<td>0 µs</td><td>&lt;script&gt; (1)</td><td>not known</td>"),
            std::string::npos)
      << html;
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_EQ(html.find("<items>"), std::string::npos);
}

TEST(WorkloadHtml, MillisecondsBetweenTenThousandMicrosAndTenSeconds) {
  rules::WorkloadSnapshot w;
  w.shapes.push_back(shape("d", "c", "find", "{}"));
  w.shapes[0].stats.micros = 12'345;
  w.overflow.micros = 9'999;
  const std::string html = workload_section(w).html;
  EXPECT_NE(html.find("<td>12.3 ms</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("0 operations (9999 µs)"), std::string::npos) << html;
  EXPECT_EQ(html.rfind("<h2>Workload</h2>", 0), 0u);
  EXPECT_TRUE(html.ends_with("</table>"));
}

std::vector<rules::CandidateVerdicts> verdicts() {
  rules::CandidateVerdicts with_id{"no-unbounded", "max_array:tags", 12, {}};
  with_id.apps = {{"billing", 3, 1}, {"", 0, 2}};
  rules::CandidateVerdicts without_id{"", "require_field:\"owner\"", 20, {}};
  return {with_id, without_id};
}

TEST(CandidateVerdictsJson, EachRuleByIdElseKeyWithItsAppsVerdicts) {
  EXPECT_EQ(members_json(candidate_verdicts_section(verdicts())),
            R"({"candidate_verdicts":[)"
            R"({"rule":"no-unbounded","id":"no-unbounded","key":"max_array:tags","line":12,)"
            R"("apps":[{"app":"billing","would_block":3,"would_warn":1},)"
            R"({"app":"","would_block":0,"would_warn":2}]},)"
            R"({"rule":"require_field:\"owner\"","id":null,"key":"require_field:\"owner\"",)"
            R"("line":20,"apps":[]}]})");
  EXPECT_EQ(members_json(candidate_verdicts_section({})), R"({"candidate_verdicts":[]})");
}

TEST(CandidateVerdictsHtml, ARowPerAppOrNoneYet) {
  EXPECT_EQ(candidate_verdicts_section({}).html, "");
  auto v = verdicts();
  v[1].key = "<k>";
  const std::string html = candidate_verdicts_section(v).html;
  EXPECT_EQ(html.rfind("<h2>Candidate rules</h2>", 0), 0u) << html;
  EXPECT_TRUE(html.ends_with("</table>"));
  EXPECT_NE(html.find("<tr><td><code>no-unbounded</code></td><td>12</td><td>billing</td><td>3</td>"
                      "<td>1</td></tr><tr><td><code>no-unbounded</code></td><td>12</td>"
                      "<td>(no app name)</td><td>0</td><td>2</td></tr>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<tr><td><code>&lt;k&gt;</code></td><td>20</td>"
                      "<td class='muted'>none yet</td><td>0</td><td>0</td></tr>"),
            std::string::npos)
      << html;
}

std::vector<rules::ValidatorCensus> census() {
  rules::ValidatorCensus c;
  c.db = "shop";
  c.collection = "orders";
  c.rule = "orders-schema";
  c.candidate = true;
  c.stored_sampled = 200;
  c.stored_failing = 13;
  c.failing_properties = {{"total", 9}, {"<x>", 4}};
  c.writes_failing_by_app = {{"billing", 5}, {"", 1}};
  return {c};
}

TEST(ValidatorsJson, TheCensusAsTheSectionsMember) {
  EXPECT_EQ(members_json(validators_section(census())),
            R"({"validators":[{"db":"shop","collection":"orders","rule":"orders-schema",)"
            R"("candidate":true,"stored_sampled":200,"stored_failing":13,)"
            R"("failing_properties":{"total":9,"<x>":4},)"
            R"("writes_failing_by_app":{"billing":5,"":1}}]})");
  EXPECT_EQ(members_json(validators_section({})), R"({"validators":[]})");
}

TEST(ValidatorsHtml, ARowPerValidatorEscaped) {
  EXPECT_EQ(validators_section({}).html, "");
  const std::string html = validators_section(census()).html;
  EXPECT_EQ(html.rfind("<h2>Validators</h2>", 0), 0u) << html;
  EXPECT_NE(html.find("<tr><td><code>shop.orders</code></td><td><code>orders-schema</code> "
                      "(candidate)</td><td>13 / 200</td><td>total (9), &lt;x&gt; (4)</td>"
                      "<td>billing (5), (no app name) (1)</td></tr></table>"),
            std::string::npos)
      << html;
}

}  // namespace
}  // namespace docguard::proxy
