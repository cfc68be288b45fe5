// OP_MSG parse (section kinds 0, 1 and 3; the first sequence document's outline checked against
// its walk) -> command view -> every rule (the query guardrail and
// the workload ledger included) -> batch splitter -> reply merger, on arbitrary bytes presented as
// a whole message (the header's length is patched to match).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "docguard/codec/command_view.h"
#include "docguard/codec/op_msg.h"
#include "docguard/conversation/reply_merge.h"
#include "docguard/conversation/request_plan.h"
#include "docguard/rules/document_shape.h"
#include "docguard/rules/engine.h"
#include "docguard/settings/yaml_settings.h"

namespace {

docguard::rules::Engine& engine() {
  // Block everything that can be blocked, so the splitter runs as often as possible.
  static docguard::rules::Engine e(docguard::settings::parse_rules(YAML::Load(R"(
mode: block
rules:
  - match: "*"
    action: block
    max_document_bytes: 64
    max_array_length: 2
    array_length: { "a.b": 1 }
    require_push_slice: true
    max_nesting_depth: 3
    max_lookup_ratio: 0.1
    lookup_min_reads: 1
    require_index: true
    max_time_ms: 100
    max_time_ms_writes: true
tracking: { max_namespaces: 8, max_field_paths: 8, max_tracked_documents: 16 }
)"),
                                                                   "fuzz"),
                                   nullptr, nullptr);
  return e;
}

// The query guardrail judges filters against known indexes (a compound, a hashed, a text and a
// wildcard one), so its walk of the filter and its shape text run too.
docguard::rules::Engine& engine_with_indexes() {
  static docguard::rules::Engine& e = []() -> docguard::rules::Engine& {
    docguard::rules::Engine& with = engine();
    for (const char* coll : {"c", "items", "orders"}) {
      with.index_catalog().set("test", coll,
                               {{"_id_", {{"_id", "1"}}},
                                {"a_1_b_-1", {{"a", "1"}, {"b", "-1"}}},
                                {"h_hashed", {{"h", "hashed"}}},
                                {"t_text", {{"_fts", "text"}, {"_ftsx", "1"}}},
                                {"w", {{"w.$**", "1"}}}},
                               "fuzz");
    }
    return with;
  }();
  return e;
}

bool same_bytes(const docguard::codec::BsonView& a, const docguard::codec::BsonView& b) {
  return a.size == b.size && (a.size == 0 || std::memcmp(a.data, b.data, a.size) == 0);
}

// The first sequence document's shape, read from the outline parse() took, is the shape its
// own walk measures.
void check_outlined_shape(const docguard::codec::OpMsg& msg) {
  using namespace docguard;
  if (msg.sequences.empty() || msg.sequences[0].documents.empty()) return;
  const codec::BsonView& doc = msg.sequences[0].documents[0];
  static rules::DocumentShape walked;
  static rules::DocumentShape read;
  walked.measure(doc);
  read.measure(doc, msg.first_sequence_document);
  bool same = read.bytes() == walked.bytes() && read.depth() == walked.depth() &&
              read.array_count() == walked.array_count() && read.has_id() == walked.has_id();
  for (size_t i = 0; same && i < walked.array_count(); ++i) {
    same = read.arrays_begin()[i].path == walked.arrays_begin()[i].path &&
           read.arrays_begin()[i].length == walked.arrays_begin()[i].length;
  }
  if (same && walked.has_id()) same = read.id_element().value == walked.id_element().value;
  if (!same) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace docguard;
  std::vector<uint8_t> message(codec::kHeaderSize);
  message.insert(message.end(), data, data + size);
  codec::write_header(message.data(), codec::MsgHeader{static_cast<int32_t>(message.size()), 7, 0,
                                                       codec::OpCode::kMsg});
  try {
    const codec::OpMsg msg = codec::OpMsg::parse(message, /*verify_checksum=*/size % 2 == 0);
    check_outlined_shape(msg);
    const codec::CommandView view = codec::describe(msg);
    const rules::Verdict verdict =
        engine_with_indexes().inspect(view, rules::RequestContext{"fuzz", "fuzz"});
    if (verdict.any_block()) {
      conversation::RequestPlan plan = conversation::plan_request(msg, view, verdict, -1);
      if (!plan.message.empty()) {
        const codec::OpMsg rebuilt = codec::OpMsg::parse(plan.message);
        // A rewritten request keeps the client's trace context byte for byte.
        if (plan.kind == conversation::RequestPlan::Kind::kForwardRewritten &&
            !same_bytes(rebuilt.trace_context, msg.trace_context)) {
          __builtin_trap();
        }
      }
      if (plan.merge) {
        // Feed the request itself back as if it were the upstream's reply.
        auto merged = conversation::merge_reply(*plan.merge, msg, 7);
        if (!merged.empty()) (void)codec::OpMsg::parse(merged);
      }
    }
    if (engine().wants_reply_sample(view)) engine().observe_reply(view, msg);
  } catch (const codec::ProtocolError&) {
  }
  return 0;
}
