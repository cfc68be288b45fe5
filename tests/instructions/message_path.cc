// One fixed message through everything docguard does with it in user space except the sockets
// and Asio: the request through the conversation (OP_MSG parse, describe, every rule, the live
// advisor and the metrics the proxy registers), then its reply (failover signals, the
// conversation's reply path), N times. instruction_guard.sh runs this under callgrind with
// N=1 and N=1+K: the difference divided by K is the cost of one message without start-up.
//
// Usage: docguard_message_path MESSAGE N, MESSAGE one of small_insert, find,
// insert_1mib, bulk_push_update, find_guardrail, update_guardrail (`list` prints them). The
// *_guardrail ones run with the query guardrail's index check on as well (require_index for every
// namespace, the collection's indexes known): an _id find and an update by an indexed field.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench_messages.h"
#include "docguard/proxy/failover.h"
#include "docguard/proxy/runtime.h"
#include "docguard/proxy/session.h"

namespace docguard {
namespace {

// Every rule on, in warn mode, as the benchmarks run docguard. Reads are not sampled: the
// default rate (1 in 100, drawn per thread from a seed taken from an address) would make the
// count depend on where the process was loaded.
constexpr const char* kRules =
    "mode: warn\n"
    "tracking:\n  read_sample_rate: 0\n"
    "rules:\n  - match: '*'\n    max_document_bytes: 20MB\n    max_array_length: 10000\n"
    "    array_length: {tags: 100}\n    require_push_slice: true\n    max_nesting_depth: 100\n"
    "    max_lookup_ratio: 0.5\n    lookup_min_reads: 1000000000\n";

// The same with the query guardrail's index check on for every namespace.
const std::string kGuardrailRules =
    std::string(kRules) + "  - match: '*'\n    require_index: true\n";

constexpr int32_t kRequestId = 7;

// update {q: {status: "open"}, u: {$set: {seen: true}}}: a filter an index serves.
std::vector<uint8_t> indexed_update() {
  codec::OwnedBson body;
  BSON_APPEND_UTF8(body.get(), "update", "items");
  bson_t updates, st, q, u, set;
  BSON_APPEND_ARRAY_BEGIN(body.get(), "updates", &updates);
  BSON_APPEND_DOCUMENT_BEGIN(&updates, "0", &st);
  BSON_APPEND_DOCUMENT_BEGIN(&st, "q", &q);
  BSON_APPEND_UTF8(&q, "status", "open");
  bson_append_document_end(&st, &q);
  BSON_APPEND_DOCUMENT_BEGIN(&st, "u", &u);
  BSON_APPEND_DOCUMENT_BEGIN(&u, "$set", &set);
  BSON_APPEND_BOOL(&set, "seen", true);
  bson_append_document_end(&u, &set);
  bson_append_document_end(&st, &u);
  bson_append_document_end(&updates, &st);
  bson_append_array_end(body.get(), &updates);
  BSON_APPEND_UTF8(body.get(), "$db", "bench");
  return codec::OpMsgBuilder(kRequestId, 0).body(body.get()).finish();
}

std::vector<uint8_t> reply(const bson_t* body) {
  return codec::OpMsgBuilder(1000, kRequestId).body(body).finish();
}

// {n: count, ok: 1}: what a server answers a write that succeeded.
std::vector<uint8_t> write_reply(int32_t count) {
  codec::OwnedBson body;
  BSON_APPEND_INT32(body.get(), "n", count);
  BSON_APPEND_DOUBLE(body.get(), "ok", 1.0);
  return reply(body.get());
}

// A find's reply holding one document.
std::vector<uint8_t> cursor_reply(const codec::OwnedBson& doc) {
  codec::OwnedBson body;
  bson_t cursor, batch, d;
  BSON_APPEND_DOCUMENT_BEGIN(body.get(), "cursor", &cursor);
  BSON_APPEND_ARRAY_BEGIN(&cursor, "firstBatch", &batch);
  bson_init_static(&d, doc.view().data, doc.view().size);
  BSON_APPEND_DOCUMENT(&batch, "0", &d);
  bson_append_array_end(&cursor, &batch);
  BSON_APPEND_INT64(&cursor, "id", 0);
  BSON_APPEND_UTF8(&cursor, "ns", "bench.items");
  bson_append_document_end(body.get(), &cursor);
  BSON_APPEND_DOUBLE(body.get(), "ok", 1.0);
  return reply(body.get());
}

// update with `count` statements {q: {_id: i}, u: {$push: {tags: {$each: [..], $slice: -20}}}}:
// bounded pushes, so require_push_slice passes and every statement is measured.
std::vector<uint8_t> bulk_push_update(int count) {
  codec::OwnedBson body;
  BSON_APPEND_UTF8(body.get(), "update", "items");
  BSON_APPEND_BOOL(body.get(), "ordered", true);
  bson_t updates;
  BSON_APPEND_ARRAY_BEGIN(body.get(), "updates", &updates);
  for (int i = 0; i < count; ++i) {
    bson_t st, q, u, push, tags, each;
    const std::string key = std::to_string(i);
    bson_append_document_begin(&updates, key.c_str(), -1, &st);
    BSON_APPEND_DOCUMENT_BEGIN(&st, "q", &q);
    BSON_APPEND_INT32(&q, "_id", i);
    bson_append_document_end(&st, &q);
    BSON_APPEND_DOCUMENT_BEGIN(&st, "u", &u);
    BSON_APPEND_DOCUMENT_BEGIN(&u, "$push", &push);
    BSON_APPEND_DOCUMENT_BEGIN(&push, "tags", &tags);
    BSON_APPEND_ARRAY_BEGIN(&tags, "$each", &each);
    BSON_APPEND_UTF8(&each, "0", "new");
    BSON_APPEND_UTF8(&each, "1", "hot");
    bson_append_array_end(&tags, &each);
    BSON_APPEND_INT32(&tags, "$slice", -20);
    bson_append_document_end(&push, &tags);
    bson_append_document_end(&u, &push);
    bson_append_document_end(&st, &u);
    bson_append_document_end(&updates, &st);
  }
  bson_append_array_end(body.get(), &updates);
  BSON_APPEND_UTF8(body.get(), "$db", "bench");
  return codec::OpMsgBuilder(kRequestId, 0).body(body.get()).finish();
}

// The request with the reply the stub upstream would give; false for an unknown name.
bool make(const std::string& name, std::vector<uint8_t>& request, std::vector<uint8_t>& answer) {
  if (name == "small_insert") {
    request = bench::one_doc_insert(bench::small_doc(1));
    answer = write_reply(1);
  } else if (name == "find") {
    request = bench::find_by_id_message();
    answer = cursor_reply(bench::small_doc(1));
  } else if (name == "insert_1mib") {
    request = bench::one_doc_insert(bench::sized_doc(1 << 20, /*structured=*/true));
    answer = write_reply(1);
  } else if (name == "bulk_push_update") {
    request = bulk_push_update(100);
    answer = write_reply(100);
  } else if (name == "find_guardrail") {
    request = bench::find_by_id_message();
    answer = cursor_reply(bench::small_doc(1));
  } else if (name == "update_guardrail") {
    request = indexed_update();
    answer = write_reply(1);
  } else {
    return false;
  }
  // The builders number requests themselves; the reply must answer this one.
  std::memcpy(request.data() + 4, &kRequestId, sizeof kRequestId);
  return true;
}

}  // namespace
}  // namespace docguard

int main(int argc, char** argv) {
  using namespace docguard;
  if (argc == 2 && std::strcmp(argv[1], "list") == 0) {
    std::puts(
        "small_insert\nfind\ninsert_1mib\nbulk_push_update\nfind_guardrail\nupdate_guardrail");
    return 0;
  }
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MESSAGE N | list\n", argv[0]);
    return 2;
  }
  spdlog::set_level(spdlog::level::off);
  std::vector<uint8_t> request, answer;
  if (!make(argv[1], request, answer)) {
    std::fprintf(stderr, "unknown message %s\n", argv[1]);
    return 2;
  }
  const long n = std::strtol(argv[2], nullptr, 10);

  proxy::ProxyConfig config;
  proxy::set_upstream(config, "mongodb://127.0.0.1:1");
  const bool guardrail = std::string(argv[1]).ends_with("_guardrail");
  config.rules = bench::rule_set(guardrail ? kGuardrailRules.c_str() : kRules);
  proxy::ProxyRuntime runtime(config);
  runtime.engine.index_catalog().set(
      "bench", "items", {{"_id_", {{"_id", "1"}}}, {"status_1", {{"status", "1"}}}}, "bench");
  proxy::SessionHost host(runtime);
  conversation::Conversation conv(runtime.engine, runtime.conversation, "127.0.0.1:1", host);
  long forwarded = 0;
  for (long i = 0; i < n; ++i) {
    // What Session does per message, in order, without its reads and writes.
    const auto outcome = conv.on_request(request);
    if (outcome.action == conversation::Conversation::RequestOutcome::Action::kForward) {
      ++forwarded;
    }
    runtime.metrics.add_client_bytes(outcome.bytes.size());
    conv.release_request_buffer();
    runtime.metrics.add_upstream_bytes(answer.size());
    const auto back = conv.on_reply(answer);  // decodes once: the forward decision and signals
    if (back.drop || back.signals.state_change) return 1;
    conv.release_reply_buffer();
  }
  std::printf("message=%s bytes=%zu n=%ld forwarded=%ld\n", argv[1], request.size(), n, forwarded);
  return forwarded == n ? 0 : 1;
}
