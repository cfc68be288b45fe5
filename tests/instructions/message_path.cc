// One fixed message through everything docguard does with it in user space except the sockets
// and Asio: the request through the conversation (OP_MSG parse, describe, every rule, the live
// advisor and the metrics the proxy registers), then its reply (failover signals, the
// conversation's reply path), N times. instruction_guard.sh runs this under callgrind with
// N=1 and N=1+K: the difference divided by K is the cost of one message without start-up.
//
// Usage: docguard_message_path MESSAGE N, MESSAGE one of small_insert, find,
// insert_1mib, bulk_push_update, schema_insert, unvalidated_insert, tracked_push_update,
// find_guardrail, update_guardrail, find_bare, find_ledger, insert_find (`list` prints them). The
// *_guardrail ones run with the query guardrail's index check on as well (require_index for every
// namespace, the collection's indexes known): an _id find and an update by an indexed field. Every
// case runs with the workload ledger on (the default) but find_bare, the same _id find with the
// ledger off and no guardrail: the reference the ledger and the guardrail together are held to (a
// budget of instructions over it, instruction_guard.sh). find_ledger: a find by an indexed field
// with a sort and a projection, the guardrail on, so the shape's hash walks more than one key.
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
    "    max_lookup_ratio: 0.5\n    lookup_min_reads: 1000000000\n"
    // A 20-property validator on one collection (schema_insert): what judging costs per insert.
    "  - match: 'bench.validated'\n    action: block\n    json_schema:\n"
    "      bsonType: object\n"
    "      required: [_id, sku, name, price, qty]\n"
    "      additionalProperties: false\n"
    "      properties:\n"
    "        _id: {bsonType: objectId}\n"
    "        sku: {bsonType: string, pattern: '^[A-Z]{3}-[0-9]{4}$'}\n"
    "        name: {bsonType: string, minLength: 1, maxLength: 200}\n"
    "        price: {bsonType: number, minimum: 0}\n"
    "        qty: {bsonType: int, minimum: 0, maximum: 100000}\n"
    "        status: {enum: [active, retired, draft]}\n"
    "        tags: {bsonType: array, maxItems: 20, items: {bsonType: string}}\n"
    "        dims: {bsonType: object, properties: {w: {bsonType: double}, h: {bsonType: double}}}\n"
    "        descr: {bsonType: string, maxLength: 2000}\n"
    "        brand: {bsonType: string}\n"
    "        color: {bsonType: string}\n"
    "        weight: {bsonType: double, minimum: 0}\n"
    "        stock: {bsonType: long}\n"
    "        rating: {bsonType: double, minimum: 0, maximum: 5}\n"
    "        created: {bsonType: date}\n"
    "        updated: {bsonType: date}\n"
    "        active: {bsonType: bool}\n"
    "        vendor: {bsonType: string}\n"
    "        origin: {bsonType: string, maxLength: 2}\n"
    "        notes: {bsonType: [string, 'null']}\n";

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

// find {status: "open"} sort {created: -1} projection {name: 1}, limit 10.
std::vector<uint8_t> indexed_find() {
  codec::OwnedBson body;
  BSON_APPEND_UTF8(body.get(), "find", "items");
  bson_t filter, sort, projection;
  BSON_APPEND_DOCUMENT_BEGIN(body.get(), "filter", &filter);
  BSON_APPEND_UTF8(&filter, "status", "open");
  bson_append_document_end(body.get(), &filter);
  BSON_APPEND_DOCUMENT_BEGIN(body.get(), "sort", &sort);
  BSON_APPEND_INT32(&sort, "created", -1);
  bson_append_document_end(body.get(), &sort);
  BSON_APPEND_DOCUMENT_BEGIN(body.get(), "projection", &projection);
  BSON_APPEND_INT32(&projection, "name", 1);
  bson_append_document_end(body.get(), &projection);
  BSON_APPEND_INT64(body.get(), "limit", 10);
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

// insert {documents: [one 20-field document]} into bench.validated, which the 20-property
// validator above judges (and passes), or into bench.unvalidated (the same without one).
std::vector<uint8_t> twenty_field_insert(const char* collection) {
  codec::OwnedBson d;
  bson_oid_t oid;
  bson_oid_init(&oid, nullptr);
  BSON_APPEND_OID(d.get(), "_id", &oid);
  BSON_APPEND_UTF8(d.get(), "sku", "ABC-1234");
  BSON_APPEND_UTF8(d.get(), "name", "widget-standard-edition");
  BSON_APPEND_DOUBLE(d.get(), "price", 19.99);
  BSON_APPEND_INT32(d.get(), "qty", 42);
  BSON_APPEND_UTF8(d.get(), "status", "active");
  bson_t arr, sub;
  BSON_APPEND_ARRAY_BEGIN(d.get(), "tags", &arr);
  BSON_APPEND_UTF8(&arr, "0", "blue");
  BSON_APPEND_UTF8(&arr, "1", "small");
  bson_append_array_end(d.get(), &arr);
  BSON_APPEND_DOCUMENT_BEGIN(d.get(), "dims", &sub);
  BSON_APPEND_DOUBLE(&sub, "w", 1.5);
  BSON_APPEND_DOUBLE(&sub, "h", 2.5);
  bson_append_document_end(d.get(), &sub);
  BSON_APPEND_UTF8(d.get(), "descr", "a plain benchmark document");
  BSON_APPEND_UTF8(d.get(), "brand", "acme");
  BSON_APPEND_UTF8(d.get(), "color", "blue");
  BSON_APPEND_DOUBLE(d.get(), "weight", 0.5);
  BSON_APPEND_INT64(d.get(), "stock", 1000);
  BSON_APPEND_DOUBLE(d.get(), "rating", 4.5);
  BSON_APPEND_DATE_TIME(d.get(), "created", 1700000000000);
  BSON_APPEND_DATE_TIME(d.get(), "updated", 1700000000000);
  BSON_APPEND_BOOL(d.get(), "active", true);
  BSON_APPEND_UTF8(d.get(), "vendor", "acme-supplies");
  BSON_APPEND_UTF8(d.get(), "origin", "NL");
  BSON_APPEND_NULL(d.get(), "notes");
  codec::OwnedBson body;
  BSON_APPEND_UTF8(body.get(), "insert", collection);
  BSON_APPEND_BOOL(body.get(), "ordered", true);
  BSON_APPEND_UTF8(body.get(), "$db", "bench");
  const codec::BsonView doc = d.view();
  return codec::OpMsgBuilder(kRequestId, 0).body(body.get()).sequence("documents", {doc}).finish();
}

// insert of `count` documents {_id: i, tags: ["a", "b"]}: known to the tracker afterwards.
std::vector<uint8_t> tracked_documents_insert(int count) {
  codec::OwnedBson body;
  BSON_APPEND_UTF8(body.get(), "insert", "items");
  bson_t documents;
  BSON_APPEND_ARRAY_BEGIN(body.get(), "documents", &documents);
  for (int i = 0; i < count; ++i) {
    bson_t doc, tags;
    const std::string key = std::to_string(i);
    bson_append_document_begin(&documents, key.c_str(), -1, &doc);
    BSON_APPEND_INT32(&doc, "_id", i);
    BSON_APPEND_ARRAY_BEGIN(&doc, "tags", &tags);
    BSON_APPEND_UTF8(&tags, "0", "a");
    BSON_APPEND_UTF8(&tags, "1", "b");
    bson_append_array_end(&doc, &tags);
    bson_append_document_end(&documents, &doc);
  }
  bson_append_array_end(body.get(), &documents);
  BSON_APPEND_UTF8(body.get(), "$db", "bench");
  return codec::OpMsgBuilder(kRequestId, 0).body(body.get()).finish();
}

// update with `count` statements {q: {_id: i}, u: {$push: {tags: "<200 bytes>"}}} onto tracked
// documents, without $slice: each push goes into the document's growth history (the forecast).
std::vector<uint8_t> tracked_push_update(int count) {
  codec::OwnedBson body;
  BSON_APPEND_UTF8(body.get(), "update", "items");
  BSON_APPEND_BOOL(body.get(), "ordered", true);
  bson_t updates;
  BSON_APPEND_ARRAY_BEGIN(body.get(), "updates", &updates);
  const std::string element(200, 'x');
  for (int i = 0; i < count; ++i) {
    bson_t st, q, u, push;
    const std::string key = std::to_string(i);
    bson_append_document_begin(&updates, key.c_str(), -1, &st);
    BSON_APPEND_DOCUMENT_BEGIN(&st, "q", &q);
    BSON_APPEND_INT32(&q, "_id", i);
    bson_append_document_end(&st, &q);
    BSON_APPEND_DOCUMENT_BEGIN(&st, "u", &u);
    BSON_APPEND_DOCUMENT_BEGIN(&u, "$push", &push);
    BSON_APPEND_UTF8(&push, "tags", element.c_str());
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
  if (name == "small_insert" || name == "insert_find") {
    request = bench::one_doc_insert(bench::small_doc(1));
    answer = write_reply(1);
  } else if (name == "find") {
    request = bench::find_by_id_message();
    answer = cursor_reply(bench::small_doc(1));
  } else if (name == "insert_1mib") {
    request = bench::one_doc_insert(bench::sized_doc(1 << 20, /*structured=*/true));
    answer = write_reply(1);
  } else if (name == "schema_insert") {
    request = twenty_field_insert("validated");
    answer = write_reply(1);
  } else if (name == "unvalidated_insert") {
    request = twenty_field_insert("unvalidated");
    answer = write_reply(1);
  } else if (name == "bulk_push_update") {
    request = bulk_push_update(100);
    answer = write_reply(100);
  } else if (name == "tracked_push_update") {
    request = tracked_push_update(100);
    answer = write_reply(100);
  } else if (name == "find_guardrail" || name == "find_bare") {
    request = bench::find_by_id_message();
    answer = cursor_reply(bench::small_doc(1));
  } else if (name == "find_ledger") {
    request = indexed_find();
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
        "small_insert\nfind\ninsert_1mib\nbulk_push_update\nschema_insert\nunvalidated_insert\n"
        "tracked_push_update\nfind_guardrail\nupdate_guardrail\nfind_bare\nfind_ledger\n"
        "insert_find");
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
  // insert_find: a small insert and a find by _id in turn, as the benchmark's load sends them
  // (the other messages repeat one command, which every per-command cache always hits).
  std::vector<uint8_t> second_request = request, second_answer = answer;
  if (std::strcmp(argv[1], "insert_find") == 0) make("find", second_request, second_answer);
  const long n = std::strtol(argv[2], nullptr, 10);

  proxy::ProxyConfig config;
  proxy::set_upstream(config, "mongodb://127.0.0.1:1");
  const std::string name = argv[1];
  const bool guardrail = name.ends_with("_guardrail") || name == "find_ledger";
  config.rules = bench::rule_set(guardrail ? kGuardrailRules.c_str() : kRules);
  if (name == "find_bare") config.max_workload_shapes = 0;  // the ledger off
  proxy::ProxyRuntime runtime(config);
  // upstream_auth: auto, answered "not required" (what the probe finds on an upstream without
  // authentication): every request is judged, after the longest check of whether it is.
  runtime.upstream_requires_auth = false;
  runtime.engine.index_catalog().set(
      "bench", "items", {{"_id_", {{"_id", "1"}}}, {"status_1", {{"status", "1"}}}}, "bench");
  proxy::SessionHost host(runtime.metrics, runtime.request_ids);
  conversation::Conversation conv(runtime.engine, runtime.conversation, "127.0.0.1:1", host);
  if (std::strcmp(argv[1], "tracked_push_update") == 0) {
    // The pushed documents are inserted first, in every run: the guard's difference of two runs
    // leaves this out.
    const auto insert = tracked_documents_insert(100);
    std::vector<uint8_t> setup(insert.begin(), insert.end());
    conv.on_request(setup);
    conv.release_request_buffer();
    conv.on_reply(write_reply(100));
    conv.release_reply_buffer();
  }
  long forwarded = 0;
  for (long i = 0; i < n; ++i) {
    // What Session does per message, in order, without its reads and writes.
    const bool second = i % 2 == 1;
    const auto outcome = conv.on_request(second ? second_request : request);
    if (outcome.action == conversation::Conversation::RequestOutcome::Action::kForward) {
      ++forwarded;
    }
    runtime.metrics.add_client_bytes(outcome.bytes.size());
    conv.release_request_buffer();
    const std::vector<uint8_t>& reply = second ? second_answer : answer;
    runtime.metrics.add_upstream_bytes(reply.size());
    const auto back = conv.on_reply(reply);  // decodes once: the forward decision and signals
    if (back.drop || back.signals.state_change) return 1;
    conv.release_reply_buffer();
  }
  std::printf("message=%s bytes=%zu n=%ld forwarded=%ld\n", argv[1], request.size(), n, forwarded);
  return forwarded == n ? 0 : 1;
}
