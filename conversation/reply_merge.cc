// The upstream's reply to a rewritten request, merged with docguard's refusals so the client
// sees one result with its own statement indexes.
#include "docguard/conversation/reply_merge.h"

#include <bson/bson.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "docguard/codec/bson_elements.h"
#include "error_documents.h"

namespace docguard::conversation {

using codec::BsonElements;
using codec::CommandKind;
using codec::OwnedBson;
using namespace detail;

namespace {

int32_t client_index(const PendingMerge& merge, int64_t forwarded_index) {
  if (forwarded_index < 0 || static_cast<size_t>(forwarded_index) >= merge.forwarded.size()) {
    return static_cast<int32_t>(forwarded_index);
  }
  return merge.forwarded[static_cast<size_t>(forwarded_index)];
}

// Copies a document, replacing its `index_key` field (`index`; bulkWrite's `idx`) with the
// client's index. `failed`, when given, is set if the document has an `ok` other than 1.
std::vector<uint8_t> with_client_index(const PendingMerge& merge, const BsonElements& entry,
                                       std::string_view index_key, int32_t* index_out,
                                       bool* failed = nullptr) {
  OwnedBson out;
  *index_out = -1;
  if (entry.holds_document()) {
    BsonElements f(entry.container());
    while (f.next()) {
      if (f.key == index_key && f.holds_number()) {
        *index_out = client_index(merge, f.as_int64());
        bson_append_int32(out.get(), index_key.data(), static_cast<int>(index_key.size()),
                          *index_out);
      } else {
        if (failed != nullptr && f.key == "ok" && f.as_double() != 1.0) *failed = true;
        f.append_to(out.get(), f.key);
      }
    }
  }
  auto b = out.bytes();
  return {b.begin(), b.end()};
}

// The upstream's entries (already remapped) and docguard's refusals as one list in the
// client's statement order. The refusals join unless an ordered batch already stopped at an
// upstream error.
std::vector<std::vector<uint8_t>> in_client_order(std::vector<PendingMerge::Error> entries,
                                                  const PendingMerge& merge, bool upstream_error) {
  if (!(merge.ordered && upstream_error)) {
    entries.insert(entries.end(), merge.errors.begin(), merge.errors.end());
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.index < b.index; });
  std::vector<std::vector<uint8_t>> docs;
  docs.reserve(entries.size());
  for (auto& e : entries) docs.push_back(std::move(e.document));
  return docs;
}

}  // namespace

namespace {

// bulkWrite: remaps `idx` in cursor.firstBatch, adds docguard's per-op errors in idx order
// (unless an ordered batch already stopped at an upstream error) and counts them in nErrors.
std::vector<uint8_t> merge_bulk_write_reply(const PendingMerge& merge,
                                            const codec::OpMsg& upstream_reply,
                                            int32_t response_to) {
  const codec::BsonView& in = upstream_reply.body;

  std::vector<PendingMerge::Error> results;
  bool upstream_error = false;
  BsonElements cursor_element(in);
  if (!cursor_element.find("cursor") || !cursor_element.holds_document()) return {};
  BsonElements batch(cursor_element.container());
  if (batch.find("firstBatch") && batch.holds_array()) {
    BsonElements entry(batch.container());
    while (entry.next()) {
      if (!entry.holds_document()) continue;
      int32_t idx = -1;
      auto doc = with_client_index(merge, entry, "idx", &idx, &upstream_error);
      results.push_back({idx, std::move(doc)});
    }
  }
  const size_t upstream_results = results.size();
  const std::vector<std::vector<uint8_t>> docs =
      in_client_order(std::move(results), merge, upstream_error);
  const auto added = static_cast<int32_t>(docs.size() - upstream_results);

  OwnedBson body;
  BsonElements it(in);
  while (it.next()) {
    if (it.key == "cursor") {
      bson_t cursor;
      BSON_APPEND_DOCUMENT_BEGIN(body.get(), "cursor", &cursor);
      BsonElements c(cursor_element.container());
      while (c.next()) {
        if (c.key == "firstBatch") {
          append_documents(&cursor, "firstBatch", docs);
        } else {
          c.append_to(&cursor, c.key);
        }
      }
      bson_append_document_end(body.get(), &cursor);
    } else if (it.key == "nErrors" && it.holds_number()) {
      BSON_APPEND_INT32(body.get(), "nErrors", static_cast<int32_t>(it.as_int64()) + added);
    } else {
      it.append_to(body.get(), it.key);
    }
  }
  codec::OpMsgBuilder builder(upstream_reply.header.request_id, response_to,
                              upstream_reply.flags & ~codec::op_msg_flags::kChecksumPresent);
  builder.body(body.bytes());
  return builder.finish();
}

}  // namespace

std::vector<uint8_t> merge_reply(const PendingMerge& merge, const codec::OpMsg& upstream_reply,
                                 int32_t response_to) {
  const codec::BsonView& in = upstream_reply.body;
  if (in.empty()) return {};
  {
    BsonElements ok(in);
    if (!ok.find("ok") || ok.as_double() != 1.0) return {};
  }
  if (merge.kind == CommandKind::kBulkWrite) {
    return merge_bulk_write_reply(merge, upstream_reply, response_to);
  }

  // Upstream writeErrors, remapped; ours are added unless an ordered batch already stopped.
  std::vector<PendingMerge::Error> errors;
  bool upstream_errors = false;
  {
    BsonElements we(in);
    if (we.find("writeErrors") && we.holds_array()) {
      BsonElements child(we.container());
      while (child.next()) {
        int32_t index = -1;
        auto doc = with_client_index(merge, child, "index", &index);
        errors.push_back({index, std::move(doc)});
        upstream_errors = true;
      }
    }
  }
  const std::vector<std::vector<uint8_t>> error_docs =
      in_client_order(std::move(errors), merge, upstream_errors);

  OwnedBson body;
  bool wrote_errors = false;
  BsonElements it(in);
  while (it.next()) {
    const std::string_view key = it.key;
    if (key == "writeErrors") {
      if (!wrote_errors && !error_docs.empty())
        append_documents(body.get(), "writeErrors", error_docs);
      wrote_errors = true;
    } else if (key == "upserted" && it.holds_array()) {
      bson_t array;
      bson_append_array_begin(body.get(), "upserted", -1, &array);
      BsonElements child(it.container());
      while (child.next()) {
        int32_t index = -1;
        auto doc = with_client_index(merge, child, "index", &index);
        bson_t d;
        if (bson_init_static(&d, doc.data(), doc.size())) {
          bson_append_document(&array, child.key.data(), static_cast<int>(child.key.size()), &d);
        }
      }
      bson_append_array_end(body.get(), &array);
    } else if ((key.starts_with("$") || key == "operationTime" || key == "opTime" ||
                key == "electionId") &&
               !wrote_errors && !error_docs.empty()) {
      // Drivers don't care about field order, but keep writeErrors beside n / nModified.
      append_documents(body.get(), "writeErrors", error_docs);
      wrote_errors = true;
      it.append_to(body.get(), key);
    } else {
      it.append_to(body.get(), key);
    }
  }
  if (!wrote_errors && !error_docs.empty()) append_documents(body.get(), "writeErrors", error_docs);

  codec::OpMsgBuilder builder(upstream_reply.header.request_id, response_to,
                              upstream_reply.flags & ~codec::op_msg_flags::kChecksumPresent);
  builder.body(body.bytes());
  for (const auto& seq : upstream_reply.sequences) builder.sequence(seq.identifier, seq.documents);
  builder.trace_context(upstream_reply.trace_context);
  return builder.finish();
}

}  // namespace docguard::conversation
