// The upstream's reply to a rewritten request, merged with docguard's refusals so the client
// sees one result with its own statement indexes.
#include "docguard/conversation/reply_merge.h"

#include <bson/bson.h>

#include <algorithm>
#include <string>

#include "error_documents.h"

namespace docguard::conversation {

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

// Copies a document, replacing its `index` field with the client's index.
std::vector<uint8_t> with_client_index(const PendingMerge& merge, const bson_iter_t& entry,
                                       int32_t* index_out) {
  OwnedBson out;
  bson_iter_t it;
  *index_out = -1;
  if (BSON_ITER_HOLDS_DOCUMENT(&entry) && bson_iter_recurse(&entry, &it)) {
    while (bson_iter_next(&it)) {
      if (std::string_view(bson_iter_key(&it)) == "index" && BSON_ITER_HOLDS_NUMBER(&it)) {
        *index_out = client_index(merge, bson_iter_as_int64(&it));
        BSON_APPEND_INT32(out.get(), "index", *index_out);
      } else {
        bson_append_iter(out.get(), nullptr, 0, &it);
      }
    }
  }
  auto b = out.bytes();
  return {b.begin(), b.end()};
}

}  // namespace

namespace {

// bulkWrite: remaps `idx` in cursor.firstBatch, adds docguard's per-op errors in idx order
// (unless an ordered batch already stopped at an upstream error) and counts them in nErrors.
std::vector<uint8_t> merge_bulk_write_reply(const PendingMerge& merge,
                                            const codec::OpMsg& upstream_reply,
                                            int32_t response_to) {
  const codec::BsonView& in = upstream_reply.body;
  bson_iter_t it;
  if (!bson_iter_init_from_data(&it, in.data, in.size)) return {};

  struct Result {
    int32_t idx;
    std::vector<uint8_t> document;
  };
  std::vector<Result> results;
  bool upstream_error = false;
  bson_iter_t cursor_it;
  bool have_cursor = false;
  {
    bson_iter_t c = it;
    bson_iter_t batch;
    if (bson_iter_find(&c, "cursor") && BSON_ITER_HOLDS_DOCUMENT(&c)) {
      cursor_it = c;
      have_cursor = true;
      if (bson_iter_recurse(&c, &batch) && bson_iter_find(&batch, "firstBatch") &&
          BSON_ITER_HOLDS_ARRAY(&batch)) {
        bson_iter_t entry;
        if (bson_iter_recurse(&batch, &entry)) {
          while (bson_iter_next(&entry)) {
            if (!BSON_ITER_HOLDS_DOCUMENT(&entry)) continue;
            OwnedBson out;
            int32_t idx = -1;
            bson_iter_t f;
            if (bson_iter_recurse(&entry, &f)) {
              while (bson_iter_next(&f)) {
                const std::string_view key = bson_iter_key(&f);
                if (key == "idx" && BSON_ITER_HOLDS_NUMBER(&f)) {
                  idx = client_index(merge, bson_iter_as_int64(&f));
                  BSON_APPEND_INT32(out.get(), "idx", idx);
                } else {
                  if (key == "ok" && bson_iter_as_double(&f) != 1.0) upstream_error = true;
                  bson_append_iter(out.get(), nullptr, 0, &f);
                }
              }
            }
            auto b = out.bytes();
            results.push_back({idx, {b.begin(), b.end()}});
          }
        }
      }
    }
  }
  if (!have_cursor) return {};
  int32_t added = 0;
  if (!(merge.ordered && upstream_error)) {
    for (const auto& e : merge.errors) {
      results.push_back({e.index, e.document});
      ++added;
    }
  }
  std::stable_sort(results.begin(), results.end(),
                   [](const Result& a, const Result& b) { return a.idx < b.idx; });
  std::vector<std::vector<uint8_t>> docs;
  docs.reserve(results.size());
  for (auto& r : results) docs.push_back(std::move(r.document));

  OwnedBson body;
  while (bson_iter_next(&it)) {
    const std::string_view key = bson_iter_key(&it);
    if (key == "cursor") {
      bson_t cursor;
      BSON_APPEND_DOCUMENT_BEGIN(body.get(), "cursor", &cursor);
      bson_iter_t c;
      if (bson_iter_recurse(&cursor_it, &c)) {
        while (bson_iter_next(&c)) {
          if (std::string_view(bson_iter_key(&c)) == "firstBatch") {
            append_documents(&cursor, "firstBatch", docs);
          } else {
            bson_append_iter(&cursor, nullptr, 0, &c);
          }
        }
      }
      bson_append_document_end(body.get(), &cursor);
    } else if (key == "nErrors" && BSON_ITER_HOLDS_NUMBER(&it)) {
      BSON_APPEND_INT32(body.get(), "nErrors",
                        static_cast<int32_t>(bson_iter_as_int64(&it)) + added);
    } else {
      bson_append_iter(body.get(), nullptr, 0, &it);
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
  bson_iter_t it;
  if (in.empty() || !bson_iter_init_from_data(&it, in.data, in.size)) return {};
  {
    bson_iter_t ok = it;
    if (!bson_iter_find(&ok, "ok") || bson_iter_as_double(&ok) != 1.0) return {};
  }
  if (merge.kind == CommandKind::kBulkWrite) {
    return merge_bulk_write_reply(merge, upstream_reply, response_to);
  }

  // Upstream writeErrors, remapped; ours are added unless an ordered batch already stopped.
  struct Entry {
    int32_t index;
    std::vector<uint8_t> document;
  };
  std::vector<Entry> errors;
  bool upstream_errors = false;
  {
    bson_iter_t we = it;
    bson_iter_t child;
    if (bson_iter_find(&we, "writeErrors") && BSON_ITER_HOLDS_ARRAY(&we) &&
        bson_iter_recurse(&we, &child)) {
      while (bson_iter_next(&child)) {
        int32_t index = -1;
        auto doc = with_client_index(merge, child, &index);
        errors.push_back({index, std::move(doc)});
        upstream_errors = true;
      }
    }
  }
  if (!(merge.ordered && upstream_errors)) {
    for (const auto& e : merge.errors) errors.push_back({e.index, e.document});
  }
  std::stable_sort(errors.begin(), errors.end(),
                   [](const Entry& a, const Entry& b) { return a.index < b.index; });
  std::vector<std::vector<uint8_t>> error_docs;
  error_docs.reserve(errors.size());
  for (auto& e : errors) error_docs.push_back(std::move(e.document));

  OwnedBson body;
  bool wrote_errors = false;
  while (bson_iter_next(&it)) {
    const std::string_view key = bson_iter_key(&it);
    if (key == "writeErrors") {
      if (!wrote_errors && !error_docs.empty())
        append_documents(body.get(), "writeErrors", error_docs);
      wrote_errors = true;
    } else if (key == "upserted" && BSON_ITER_HOLDS_ARRAY(&it)) {
      bson_t array;
      bson_append_array_begin(body.get(), "upserted", -1, &array);
      bson_iter_t child;
      if (bson_iter_recurse(&it, &child)) {
        while (bson_iter_next(&child)) {
          int32_t index = -1;
          auto doc = with_client_index(merge, child, &index);
          bson_t d;
          if (bson_init_static(&d, doc.data(), doc.size())) {
            bson_append_document(&array, bson_iter_key(&child), -1, &d);
          }
        }
      }
      bson_append_array_end(body.get(), &array);
    } else if ((key.starts_with("$") || key == "operationTime" || key == "opTime" ||
                key == "electionId") &&
               !wrote_errors && !error_docs.empty()) {
      // Drivers don't care about field order, but keep writeErrors beside n / nModified.
      append_documents(body.get(), "writeErrors", error_docs);
      wrote_errors = true;
      bson_append_iter(body.get(), nullptr, 0, &it);
    } else {
      bson_append_iter(body.get(), nullptr, 0, &it);
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
