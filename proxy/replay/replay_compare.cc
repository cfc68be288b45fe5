// The replay's comparison of recorded and live answers, per query shape (replay_compare.h).
#include "docguard/proxy/replay_compare.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/command_view.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"
#include "docguard/rules/query_guardrail.h"

namespace docguard::proxy {

namespace {

using codec::BsonElements;
using codec::BsonView;

void add_batch(ReplyDigest& digest, const BsonElements& batch) {
  for (BsonElements doc(batch.container()); doc.next();) {
    if (doc.holds_document()) digest.documents.push_back(document_hash(doc.container()));
  }
}

void add_cursor(ReplyDigest& digest, const BsonElements& cursor) {
  for (BsonElements it(cursor.container()); it.next();) {
    if (it.key == "id" && it.holds_number()) {
      digest.cursor_id = it.as_int64();
    } else if (it.key == "firstBatch" || it.key == "nextBatch") {
      add_batch(digest, it);
    }
  }
}

}  // namespace

uint64_t document_hash(const BsonView& document) {
  return codec::hash_bytes({reinterpret_cast<const char*>(document.data), document.size});
}

void add_reply(ReplyDigest& digest, const BsonView& reply) {
  digest.present = true;
  // A recorded reply is read from a file: one whose framing is broken counts as empty.
  bson_t framed;
  if (reply.empty() || !bson_init_static(&framed, reply.data, reply.size)) return;
  digest.cursor_id = 0;
  for (BsonElements it(reply); it.next();) {
    const std::string_view key = it.key;
    if (key == "ok") {
      digest.ok = it.as_double() == 1.0;
    } else if (key == "code" && it.holds_number()) {
      digest.code = static_cast<int32_t>(it.as_int64());
    } else if (key == "codeName" && it.holds_utf8()) {
      digest.code_name = it.utf8();
    } else if (key == "n" && it.holds_number()) {
      digest.n = it.as_int64();
    } else if (key == "nModified" && it.holds_number()) {
      digest.n_modified = it.as_int64();
    } else if (key == "nMatched" && it.holds_number()) {
      digest.n_matched = it.as_int64();
    } else if (key == "cursor") {
      add_cursor(digest, it);
    }
  }
}

bool same_answer(const ReplyDigest& recorded, const ReplyDigest& live, bool ordered,
                 std::string* why) {
  const auto differ = [why](std::string text) {
    if (why != nullptr) *why = std::move(text);
    return false;
  };
  if (!recorded.present || !live.present) {
    return recorded.present == live.present
               ? true
               : differ(live.present ? "no recorded reply" : "no live reply");
  }
  if (recorded.ok != live.ok) {
    // The side that failed says why: its code and codeName (a guardrail's refusal is 291).
    const ReplyDigest& failed = recorded.ok ? live : recorded;
    std::string code = failed.code != 0 ? "code " + std::to_string(failed.code) : "";
    if (!failed.code_name.empty()) code += (code.empty() ? "" : " ") + failed.code_name;
    return differ(std::string("ok ") + (recorded.ok ? "1" : "0") + " vs " + (live.ok ? "1" : "0") +
                  (code.empty() ? "" : " (" + code + ")"));
  }
  if (recorded.code != live.code) {
    return differ("code " + std::to_string(recorded.code) + " vs " + std::to_string(live.code));
  }
  const auto count = [&](const char* name, const std::optional<int64_t>& a,
                         const std::optional<int64_t>& b) {
    if (a == b) return true;
    const auto text = [](const std::optional<int64_t>& v) {
      return v ? std::to_string(*v) : std::string("none");
    };
    return differ(std::string(name) + " " + text(a) + " vs " + text(b));
  };
  if (!count("n", recorded.n, live.n) ||
      !count("nModified", recorded.n_modified, live.n_modified) ||
      !count("nMatched", recorded.n_matched, live.n_matched)) {
    return false;
  }
  if (recorded.documents.size() != live.documents.size()) {
    return differ("documents " + std::to_string(recorded.documents.size()) + " vs " +
                  std::to_string(live.documents.size()));
  }
  if (ordered) {
    const auto mismatch =
        std::mismatch(recorded.documents.begin(), recorded.documents.end(), live.documents.begin());
    if (mismatch.first == recorded.documents.end()) return true;
    return differ("documents differ (in order): first at position " +
                  std::to_string(mismatch.first - recorded.documents.begin()));
  }
  std::vector<uint64_t> a = recorded.documents;
  std::vector<uint64_t> b = live.documents;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if (a == b) return true;
  std::vector<uint64_t> missing;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(missing));
  return differ("documents differ (multiset): " + std::to_string(missing.size()) + " of " +
                std::to_string(a.size()) + " not matched");
}

uint64_t percentile(std::vector<uint64_t> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return values[std::min(index, values.size() - 1)];
}

std::vector<ShapeResult> compare_by_shape(const std::vector<ComparedOperation>& operations) {
  std::map<std::string, ShapeResult> by_shape;
  std::map<std::string, std::pair<std::vector<uint64_t>, std::vector<uint64_t>>> latencies;
  for (const ComparedOperation& op : operations) {
    ShapeResult& result = by_shape[op.shape];
    result.shape = op.shape;
    ++result.operations;
    result.recorded_documents += op.recorded.documents.size();
    result.live_documents += op.live.documents.size();
    auto& [recorded, live] = latencies[op.shape];
    recorded.insert(recorded.end(), op.recorded_micros.begin(), op.recorded_micros.end());
    live.insert(live.end(), op.live_micros.begin(), op.live_micros.end());
    std::string why;
    if (!same_answer(op.recorded, op.live, op.sorted, &why)) {
      if (result.differing++ == 0) {
        result.first_difference = why;
        result.example = &op;
      }
    }
  }
  std::vector<ShapeResult> out;
  out.reserve(by_shape.size());
  for (auto& [shape, result] : by_shape) {
    const auto& [recorded, live] = latencies[shape];
    result.recorded_p50 = percentile(recorded, 50);
    result.recorded_p99 = percentile(recorded, 99);
    result.live_p50 = percentile(live, 50);
    result.live_p99 = percentile(live, 99);
    out.push_back(std::move(result));
  }
  return out;
}

}  // namespace docguard::proxy
