// The replay's comparison: for each operation, what the recorded cluster answered against what
// the live one answers, gathered per query shape.
//
// An operation is one recorded request and its reply; a cursor's getMores join the operation
// that opened it, so its documents are compared whole, however the batches fell. What is
// compared: ok and the error code; n, nModified and nMatched when the reply has them;
// findAndModify's value and lastErrorObject.updatedExisting; distinct's values (a multiset);
// writeErrors (index and code); how many cursors killCursors killed and did not find; the
// result documents (firstBatch and every nextBatch), each hashed, in order when the command
// sorts and as a multiset otherwise (an unsorted read may return the same documents in another
// order on another cluster, and that is no difference). Paths the user ignores (--ignore) are
// left out of each document before it is hashed. Latencies are kept to show p50 / p99.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "docguard/base/expected.h"
#include "docguard/codec/bson_view.h"
#include "docguard/codec/message.h"
#include "docguard/recording/recorded_shape.h"

namespace docguard::tools {

// What a reply says, reduced to what the comparison looks at.
struct ReplyDigest {
  bool present = false;  // false: no reply (not recorded, or the request was not sent)
  bool ok = false;
  int32_t code = 0;
  std::string code_name;  // codeName of an error reply
  std::optional<int64_t> n, n_modified, n_matched;
  std::vector<uint64_t> documents;       // a hash per result document, in the order received
  int64_t cursor_id = 0;                 // cursor.id of the last reply, 0 when none or exhausted
  std::optional<uint64_t> value;         // findAndModify's value (the hash of its bytes; 0: null)
  std::optional<bool> updated_existing;  // findAndModify's lastErrorObject.updatedExisting
  std::optional<std::vector<uint64_t>> values;            // distinct's values, hashed
  std::vector<std::pair<int64_t, int32_t>> write_errors;  // (index, code)
  std::optional<size_t> cursors_killed, cursors_not_found;
  // The recording kept replies to their status (recording.reply_documents: false): no document
  // of this side can be compared.
  bool documents_redacted = false;
};

// Reads ok, code, the counts, cursor.id and the documents of cursor.firstBatch or nextBatch
// into `digest`, appending the documents to those already there (a getMore's batch); the
// documents' `ignore` paths ("a.b") are left out of their hashes.
void add_reply(ReplyDigest& digest, const codec::BsonView& reply,
               std::span<const std::string> ignore = {});

// A document's hash for the comparison: of its bytes, so field order counts, as the server
// keeps it; without the `ignore` paths.
uint64_t document_hash(const codec::BsonView& document, std::span<const std::string> ignore = {});

// Where two replies' documents first differ: "value.status", "document 3: items.0.sku",
// "values", with both values (their types unless `show_values`). Documents of a sorted read
// are paired by position, others by _id. Empty when no pair of documents differs.
std::string first_field_difference(const codec::BsonView& recorded, const codec::BsonView& live,
                                   bool sorted, bool show_values,
                                   std::span<const std::string> ignore = {});

// Whether two digests give the same answer: success, or the first difference in words ("n 3 vs
// 2", "documents differ (multiset): 1 of 40 not matched"; an error on one side only is named by
// its code: "ok 1 vs 0 (code 291 NoQueryExecutionPlans)").
using AnswerComparison = base::Expected<void, std::string>;
AnswerComparison same_answer(const ReplyDigest& recorded, const ReplyDigest& live, bool ordered);

// One compared operation, with what the report shows of it.
struct ComparedOperation {
  std::string shape;
  bool sorted = false;
  ReplyDigest recorded;
  ReplyDigest live;
  std::vector<uint64_t> recorded_micros;  // per request of the operation (the find, its getMores)
  std::vector<uint64_t> live_micros;
  std::string request_json;  // the replayed command
  std::string recorded_reply_json;
  std::string live_reply_json;
  std::string live_error;        // libmongoc's error when no reply came (network, selection)
  std::string field_difference;  // first_field_difference of the first batch that differed
  // Why the results cannot repeat ($sample, $$NOW, ...): replayed, not compared.
  std::string not_comparable;
};

// The result per shape.
struct ShapeResult {
  std::string shape;
  uint64_t operations = 0;
  uint64_t differing = 0;
  uint64_t recorded_documents = 0;  // result documents, all operations together
  uint64_t live_documents = 0;
  uint64_t recorded_p50 = 0, recorded_p99 = 0, live_p50 = 0, live_p99 = 0;  // microseconds
  std::string first_difference;                                             // in words
  std::shared_ptr<const ComparedOperation> example;  // the first differing operation
  uint64_t not_comparable = 0;  // operations replayed whose results cannot repeat
  std::string not_comparable_why;
  // --baseline: the shape differs against the copy of production too, so its difference is
  // noise rather than staging's; baseline_difference says how it differed there.
  bool noise = false;
  std::string baseline_difference;
  // Differs, and not as noise: what the exit code counts.
  bool differs() const { return differing > 0 && !noise; }
};

// The comparison as it goes: each finished operation is folded into its shape's result and
// forgotten, so memory holds the shapes and the operations still open, not the replay.
// Thread-safe.
class ShapeTally {
 public:
  void add(ComparedOperation operation);
  // Every shape's result, in shape order.
  std::vector<ShapeResult> results() const;

 private:
  struct Entry {
    ShapeResult result;
    std::vector<uint64_t> recorded_micros, live_micros;  // a bounded sample of each
    uint64_t seen = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, Entry> shapes_;
};

// Groups operations by shape, compares each, in shape order.
std::vector<ShapeResult> compare_by_shape(std::vector<ComparedOperation> operations);

// The p-th percentile (0..100) of the values, nearest rank; 0 when there are none.
uint64_t percentile(std::vector<uint64_t> values, double p);

}  // namespace docguard::tools
