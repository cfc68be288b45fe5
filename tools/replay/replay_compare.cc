// The replay's comparison of recorded and live answers, per query shape (replay_compare.h).
#include "docguard/tools/replay_compare.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "docguard/base/hash.h"
#include "docguard/codec/bson_elements.h"
#include "docguard/codec/command_view.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"

namespace docguard::tools {

namespace {

using codec::BsonElements;
using codec::BsonView;

void add_batch(ReplyDigest& digest, const BsonElements& batch,
               std::span<const std::string> ignore) {
  if (batch.holds_utf8()) {  // the recorder's marker: the recording kept no documents
    digest.documents_redacted = true;
    return;
  }
  for (BsonElements doc(batch.container()); doc.next();) {
    if (doc.holds_document()) digest.documents.push_back(document_hash(doc.container(), ignore));
  }
}

void add_cursor(ReplyDigest& digest, const BsonElements& cursor,
                std::span<const std::string> ignore) {
  for (BsonElements it(cursor.container()); it.next();) {
    if (it.key == "id" && it.holds_number()) {
      digest.cursor_id = it.as_int64();
    } else if (it.key == "firstBatch" || it.key == "nextBatch") {
      add_batch(digest, it, ignore);
    }
  }
}

uint64_t value_hash(const BsonElements& it) {
  bson_value_t value;
  if (!it.borrow_value(&value)) return 0;
  // The value's type and bytes: wrap it in a one-field document and hash that.
  codec::ScopedBson doc;
  bson_append_value(doc.get(), "v", 1, &value);
  return base::hash_bytes(
      {reinterpret_cast<const char*>(bson_get_data(doc.get())), doc.get()->len});
}

// Copies `doc` without the `ignore` paths that start at `prefix`.
void copy_without(const BsonView& doc, std::span<const std::string> ignore,
                  const std::string& prefix, bson_t* out, int depth) {
  for (BsonElements it(doc); it.next();) {
    const std::string path =
        prefix.empty() ? std::string(it.key) : prefix + "." + std::string(it.key);
    if (std::find(ignore.begin(), ignore.end(), path) != ignore.end()) continue;
    const bool below =
        depth < 100 && it.holds_document() &&
        std::any_of(ignore.begin(), ignore.end(), [&](const std::string& p) {
          return p.size() > path.size() && p.starts_with(path) && p[path.size()] == '.';
        });
    if (below) {
      bson_t child;
      bson_append_document_begin(out, it.key.data(), static_cast<int>(it.key.size()), &child);
      copy_without(it.container(), ignore, path, &child, depth + 1);
      bson_append_document_end(out, &child);
    } else {
      it.append_to(out, it.key);
    }
  }
}

}  // namespace

uint64_t document_hash(const BsonView& document, std::span<const std::string> ignore) {
  if (ignore.empty()) {
    return base::hash_bytes({reinterpret_cast<const char*>(document.data), document.size});
  }
  codec::ScopedBson kept;
  copy_without(document, ignore, "", kept.get(), 0);
  return base::hash_bytes(
      {reinterpret_cast<const char*>(bson_get_data(kept.get())), kept.get()->len});
}

void add_reply(ReplyDigest& digest, const BsonView& reply, std::span<const std::string> ignore) {
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
      add_cursor(digest, it, ignore);
    } else if (key == "value") {
      if (it.holds_utf8()) {
        digest.documents_redacted = true;
      } else {
        digest.value = it.holds_document() ? document_hash(it.container(), ignore) : 0;
      }
    } else if (key == "lastErrorObject" && it.holds_document()) {
      BsonElements updated(it.container());
      if (updated.find("updatedExisting")) digest.updated_existing = updated.as_bool();
    } else if (key == "values") {
      if (it.holds_array()) {
        std::vector<uint64_t> hashes;
        for (BsonElements v(it.container()); v.next();) hashes.push_back(value_hash(v));
        std::sort(hashes.begin(), hashes.end());
        digest.values = std::move(hashes);
      } else {
        digest.documents_redacted = true;
      }
    } else if (key == "writeErrors" && it.holds_array()) {
      for (BsonElements e(it.container()); e.next();) {
        if (!e.holds_document()) continue;
        digest.write_errors.emplace_back(
            codec::int_field(e.container(), "index", -1),
            static_cast<int32_t>(codec::int_field(e.container(), "code")));
      }
    } else if ((key == "cursorsKilled" || key == "cursorsNotFound") && it.holds_array()) {
      size_t count = 0;
      for (BsonElements c(it.container()); c.next();) ++count;
      (key == "cursorsKilled" ? digest.cursors_killed : digest.cursors_not_found) = count;
    }
  }
}

AnswerComparison same_answer(const ReplyDigest& recorded, const ReplyDigest& live, bool ordered) {
  const auto differ = [](std::string text) { return AnswerComparison(std::move(text)); };
  if (!recorded.present || !live.present) {
    if (recorded.present == live.present) return {};
    return differ(live.present ? "no recorded reply" : "no live reply");
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
  // "n 3 vs 2", or "" when the counts agree.
  const auto count = [](const char* name, const auto& a, const auto& b) -> std::string {
    if (a == b) return "";
    const auto text = [](const auto& v) { return v ? std::to_string(*v) : std::string("none"); };
    return std::string(name) + " " + text(a) + " vs " + text(b);
  };
  for (std::string counts :
       {count("n", recorded.n, live.n), count("nModified", recorded.n_modified, live.n_modified),
        count("nMatched", recorded.n_matched, live.n_matched)}) {
    if (!counts.empty()) return differ(std::move(counts));
  }
  if (recorded.write_errors != live.write_errors) {
    const auto text = [](const ReplyDigest& d) {
      std::string t = std::to_string(d.write_errors.size());
      if (!d.write_errors.empty()) {
        t += " (first: index " + std::to_string(d.write_errors.front().first) + " code " +
             std::to_string(d.write_errors.front().second) + ")";
      }
      return t;
    };
    return differ("writeErrors " + text(recorded) + " vs " + text(live));
  }
  for (std::string counts :
       {count("cursorsKilled", recorded.cursors_killed, live.cursors_killed),
        count("cursorsNotFound", recorded.cursors_not_found, live.cursors_not_found)}) {
    if (!counts.empty()) return differ(std::move(counts));
  }
  if (recorded.updated_existing != live.updated_existing) {
    return differ("lastErrorObject.updatedExisting differs");
  }
  // The recording kept no documents: what is left was compared.
  if (recorded.documents_redacted || live.documents_redacted) return {};
  if (recorded.value != live.value) return differ("value differs");
  if (recorded.values != live.values) {
    if (!recorded.values || !live.values) return differ("values present on one side only");
    std::vector<uint64_t> missing;
    std::set_difference(recorded.values->begin(), recorded.values->end(), live.values->begin(),
                        live.values->end(), std::back_inserter(missing));
    return differ("values differ: " + std::to_string(recorded.values->size()) + " vs " +
                  std::to_string(live.values->size()) + ", " + std::to_string(missing.size()) +
                  " not matched");
  }
  if (recorded.documents.size() != live.documents.size()) {
    return differ("documents " + std::to_string(recorded.documents.size()) + " vs " +
                  std::to_string(live.documents.size()));
  }
  if (ordered) {
    const auto mismatch =
        std::mismatch(recorded.documents.begin(), recorded.documents.end(), live.documents.begin());
    if (mismatch.first == recorded.documents.end()) return {};
    return differ("documents differ (in order): first at position " +
                  std::to_string(mismatch.first - recorded.documents.begin()));
  }
  std::vector<uint64_t> a = recorded.documents;
  std::vector<uint64_t> b = live.documents;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if (a == b) return {};
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

void ShapeTally::add(ComparedOperation op) {
  // A bounded sample of latencies per shape: the first ones, then a reservoir (each later value
  // replaces a random kept one with the odds that keep the sample uniform).
  constexpr size_t kMaxSamples = 65536;
  const bool comparable = op.not_comparable.empty();
  const AnswerComparison compared =
      comparable ? same_answer(op.recorded, op.live, op.sorted) : AnswerComparison();
  const bool same = compared.ok();
  const std::string why = same ? "" : compared.error();
  std::lock_guard lock(mu_);
  Entry& e = shapes_[op.shape];
  ShapeResult& result = e.result;
  result.shape = op.shape;
  ++result.operations;
  result.recorded_documents += op.recorded.documents.size();
  result.live_documents += op.live.documents.size();
  for (size_t side = 0; side < 2; ++side) {
    auto& kept = side == 0 ? e.recorded_micros : e.live_micros;
    for (uint64_t v : side == 0 ? op.recorded_micros : op.live_micros) {
      if (kept.size() < kMaxSamples) {
        kept.push_back(v);
      } else {
        const uint64_t slot = base::hash_bytes(std::to_string(e.seen)) % (e.seen + 1);
        if (slot < kMaxSamples) kept[slot] = v;
      }
      ++e.seen;
    }
  }
  if (!comparable) {
    if (result.not_comparable++ == 0) result.not_comparable_why = op.not_comparable;
    return;
  }
  if (!same && result.differing++ == 0) {
    // A field path says something only when both sides answered with documents.
    const bool both_answered = op.recorded.ok && op.live.ok && op.live.present;
    result.first_difference =
        op.field_difference.empty() || !both_answered ? why : why + "; " + op.field_difference;
    result.example = std::make_shared<const ComparedOperation>(std::move(op));
  }
}

std::vector<ShapeResult> ShapeTally::results() const {
  std::lock_guard lock(mu_);
  std::vector<ShapeResult> out;
  out.reserve(shapes_.size());
  for (const auto& [shape, e] : shapes_) {
    ShapeResult result = e.result;
    result.recorded_p50 = percentile(e.recorded_micros, 50);
    result.recorded_p99 = percentile(e.recorded_micros, 99);
    result.live_p50 = percentile(e.live_micros, 50);
    result.live_p99 = percentile(e.live_micros, 99);
    out.push_back(std::move(result));
  }
  return out;
}

std::vector<ShapeResult> compare_by_shape(std::vector<ComparedOperation> operations) {
  ShapeTally tally;
  for (ComparedOperation& op : operations) tally.add(std::move(op));
  return tally.results();
}

}  // namespace docguard::tools
