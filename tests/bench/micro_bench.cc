// Google Benchmark microbenchmarks of docguard's per-message work: framing, OP_MSG parsing and
// codec::describe, rules::Engine::inspect per rule and with all rules, and the batch
// splitter / reply merger. Run: build-bench/tests/bench/docguard_micro_bench
#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_messages.h"
#include "docguard/advisor/live_advisor.h"
#include "docguard/codec/inbound_buffer.h"
#include "docguard/codec/recording_redaction.h"
#include "docguard/conversation/reply_merge.h"
#include "docguard/conversation/request_plan.h"

namespace docguard::bench {
namespace {

// Messages built once, by name.
struct Corpus {
  std::map<std::string, std::vector<uint8_t>> messages;
  Corpus() {
    spdlog::set_level(spdlog::level::off);
    messages["insert_200B"] = one_doc_insert(small_doc(1));
    {
      // ~1 KiB: the small document with a longer description and a 20-element array.
      codec::OwnedBson d = small_doc(2);
      bson_t arr;
      BSON_APPEND_ARRAY_BEGIN(d.get(), "history", &arr);
      for (int i = 0; i < 20; ++i) BSON_APPEND_INT64(&arr, std::to_string(i).c_str(), 1000 + i);
      bson_append_array_end(d.get(), &arr);
      BSON_APPEND_UTF8(d.get(), "notes", std::string(1024 - d->len - 16, 'n').c_str());
      messages["insert_1KiB"] = one_doc_insert(d);
    }
    messages["insert_1MiB_blob"] = one_doc_insert(sized_doc(1 << 20, false));
    messages["insert_1MiB_structured"] = one_doc_insert(sized_doc(1 << 20, true));
    messages["insert_16MiB_blob"] = one_doc_insert(sized_doc((16 << 20) - 1024, false));
    messages["insert_16MiB_structured"] = one_doc_insert(sized_doc((16 << 20) - 1024, true));
    messages["find_by_id"] = find_by_id_message();
    messages["pipeline_20_nested_lookup"] = pipeline_message(20);
  }
  const std::vector<uint8_t>& get(const std::string& name) const { return messages.at(name); }
};
const Corpus& corpus() {
  static const Corpus c;
  return c;
}

const std::vector<std::string>& message_names() {
  static const std::vector<std::string> names = {"insert_200B",       "insert_1KiB",
                                                 "insert_1MiB_blob",  "insert_1MiB_structured",
                                                 "insert_16MiB_blob", "insert_16MiB_structured",
                                                 "find_by_id",        "pipeline_20_nested_lookup"};
  return names;
}

void set_bytes(benchmark::State& state, size_t size) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(size));
  state.counters["msg_bytes"] = static_cast<double>(size);
}

// Framing as the proxy does it: reads of at most `chunk` bytes into an InboundBuffer, then the
// message taken out in place.
void BM_InboundBuffer(benchmark::State& state, std::string name, size_t chunk) {
  const auto& m = corpus().get(name);
  codec::InboundBuffer in(64u << 20);
  for (auto _ : state) {
    size_t off = 0;
    while (off < m.size()) {
      auto space = in.writable();
      const size_t n = std::min({chunk, space.size(), m.size() - off});
      std::memcpy(space.data(), m.data() + off, n);
      in.commit(n);
      off += n;
    }
    codec::Bytes out = in.next_message();
    benchmark::DoNotOptimize(out.data());
  }
  set_bytes(state, m.size());
}

// Decoding: OpMsg::parse (with checksum verification when present) + codec::describe.
void BM_Decode(benchmark::State& state, std::string name) {
  const auto& m = corpus().get(name);
  for (auto _ : state) {
    const codec::OpMsg msg = codec::OpMsg::parse(m);
    const codec::CommandView view = codec::describe(msg);
    benchmark::DoNotOptimize(view.statements.data());
  }
  set_bytes(state, m.size());
}

// Decode + inspect with one rule set; the proxy's per-request work minus the socket.
void BM_DecodeInspect(benchmark::State& state, std::string name, size_t config) {
  const auto& m = corpus().get(name);
  const auto& rc = rule_configs()[config];
  rules::Engine engine(rule_set(rc.yaml), nullptr, nullptr);
  const rules::RequestContext ctx{"bench", "127.0.0.1:1"};
  size_t violations = 0;
  for (auto _ : state) {
    const codec::OpMsg msg = codec::OpMsg::parse(m);
    const codec::CommandView view = codec::describe(msg);
    const rules::Verdict v = engine.inspect(view, ctx);
    violations += v.violations.size();
  }
  set_bytes(state, m.size());
  state.counters["violations_per_msg"] =
      static_cast<double>(violations) / static_cast<double>(state.iterations());
}

// Inspect only (message decoded once, outside the loop).
void BM_Inspect(benchmark::State& state, std::string name, size_t config) {
  const auto& m = corpus().get(name);
  const auto& rc = rule_configs()[config];
  rules::Engine engine(rule_set(rc.yaml), nullptr, nullptr);
  const rules::RequestContext ctx{"bench", "127.0.0.1:1"};
  const codec::OpMsg msg = codec::OpMsg::parse(m);
  const codec::CommandView view = codec::describe(msg);
  for (auto _ : state) {
    const rules::Verdict v = engine.inspect(view, ctx);
    benchmark::DoNotOptimize(v.violations.data());
  }
  set_bytes(state, m.size());
}

// Inspect with the live design advisor as the engine's advice sink (as the proxy wires it):
// the cost it adds.
void BM_InspectAdvised(benchmark::State& state, std::string name, uint32_t sample_every) {
  const auto& m = corpus().get(name);
  const auto& rc = rule_configs().back();
  advisor::AdvisorSettings settings;
  settings.live_sample_every = sample_every;
  advisor::LiveAdvisor live(settings);
  rules::Engine engine(rule_set(rc.yaml), nullptr, &live);
  const rules::RequestContext ctx{"bench", "127.0.0.1:1"};
  const codec::OpMsg msg = codec::OpMsg::parse(m);
  const codec::CommandView view = codec::describe(msg);
  for (auto _ : state) {
    const rules::Verdict v = engine.inspect(view, ctx);
    benchmark::DoNotOptimize(v.violations.data());
  }
  set_bytes(state, m.size());
}

// 100-document insert batch with statement 50 blocked: split the request, merge the reply.
struct Batch {
  std::vector<uint8_t> request;
  codec::OpMsg msg;
  codec::CommandView view;
  rules::Verdict verdict;
  std::vector<uint8_t> upstream_reply;
  Batch() {
    std::vector<codec::OwnedBson> docs;
    std::vector<codec::BsonView> views;
    for (int i = 0; i < 100; ++i) docs.push_back(small_doc(i));
    for (auto& d : docs) views.push_back(d.view());
    request = insert_message(views, true, /*ordered=*/false);
    msg = codec::OpMsg::parse(request);
    view = codec::describe(msg);
    rules::Violation v;
    v.kind = rules::RuleKind::kMaxArrayLength;
    v.rule_match = "*";
    v.field_path = "tags";
    v.measured = 150;
    v.bound = 100;
    v.action = rules::Action::kBlock;
    v.statement_index = 50;
    verdict.violations.push_back(v);
    verdict.blocked_statements = {50};
    codec::OwnedBson reply;
    BSON_APPEND_INT32(reply.get(), "n", 99);
    BSON_APPEND_DOUBLE(reply.get(), "ok", 1.0);
    upstream_reply = codec::OpMsgBuilder(100, 7).body(reply.get()).finish();
  }
};

void BM_PlanRequest100(benchmark::State& state) {
  Batch b;
  for (auto _ : state) {
    auto plan = conversation::plan_request(b.msg, b.view, b.verdict, 5);
    benchmark::DoNotOptimize(plan.message.data());
  }
  set_bytes(state, b.request.size());
}

void BM_MergeReply100(benchmark::State& state) {
  Batch b;
  auto plan = conversation::plan_request(b.msg, b.view, b.verdict, 5);
  const codec::OpMsg reply = codec::OpMsg::parse(b.upstream_reply);
  for (auto _ : state) {
    auto out = conversation::merge_reply(*plan.merge, reply, 7);
    benchmark::DoNotOptimize(out.data());
  }
  set_bytes(state, b.upstream_reply.size());
}

// Reference point for "copies": one memcpy of the message.
void BM_Memcpy(benchmark::State& state, std::string name) {
  const auto& m = corpus().get(name);
  std::vector<uint8_t> dst(m.size());
  for (auto _ : state) {
    std::memcpy(dst.data(), m.data(), m.size());
    benchmark::ClobberMemory();
  }
  set_bytes(state, m.size());
}

// The recorder's writer thread: a message redacted by the recording's policy before it is
// written (most messages need no change and are copied as they stand).
void BM_RecordingRedaction(benchmark::State& state, std::string name) {
  const auto& m = corpus().get(name);
  for (auto _ : state) {
    auto safe = codec::redact_request(m, codec::kDefaultMaxMessageBytes);
    benchmark::DoNotOptimize(safe.bytes.data());
  }
  set_bytes(state, m.size());
}

int register_all() {
  for (const auto& name : message_names()) {
    benchmark::RegisterBenchmark(("frame/whole/" + name).c_str(), BM_InboundBuffer, name,
                                 size_t{1} << 30);
    if (name.find("MiB") != std::string::npos) {
      benchmark::RegisterBenchmark(("frame/16KiB_reads/" + name).c_str(), BM_InboundBuffer, name,
                                   size_t{16384});
      benchmark::RegisterBenchmark(("memcpy/" + name).c_str(), BM_Memcpy, name);
    }
    benchmark::RegisterBenchmark(("decode/" + name).c_str(), BM_Decode, name);
    benchmark::RegisterBenchmark(("record_redact/" + name).c_str(), BM_RecordingRedaction, name);
    for (size_t c = 0; c < rule_configs().size(); ++c) {
      benchmark::RegisterBenchmark(
          ("decode+inspect/" + std::string(rule_configs()[c].name) + "/" + name).c_str(),
          BM_DecodeInspect, name, c);
    }
    benchmark::RegisterBenchmark(("inspect_only/all/" + name).c_str(), BM_Inspect, name,
                                 rule_configs().size() - 1);
    for (uint32_t every : {8u, 1u}) {
      benchmark::RegisterBenchmark(
          ("inspect_advised/all/1_in_" + std::to_string(every) + "/" + name).c_str(),
          BM_InspectAdvised, name, every);
    }
  }
  benchmark::RegisterBenchmark("enforce/plan_request/100_docs_1_blocked", BM_PlanRequest100);
  benchmark::RegisterBenchmark("enforce/merge_reply/100_docs_1_blocked", BM_MergeReply100);
  return 0;
}
const int registered = register_all();

}  // namespace
}  // namespace docguard::bench

BENCHMARK_MAIN();
