// What `docguard whatif` finds in a recording: per app, rule and shape, the requests a candidate
// configuration would refuse or warn about, judged by the same conversation and rules engine a
// live docguard runs (recording_judge.cc), and how it is written out (whatif_reports.cc).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "docguard/base/expected.h"
#include "docguard/codec/message.h"
#include "docguard/rules/rule_set.h"

namespace docguard::tools::whatif {

// A request's place in the recording, as its packet and side line name it.
struct RequestRef {
  uint64_t connection = 0;
  uint64_t order = 0;
  bool operator==(const RequestRef&) const = default;
};

struct Example {
  RequestRef at;
  std::string request;  // the command as relaxed extended JSON, values redacted unless asked
  std::string detail;   // what the rule measured: field, measured, bound
};

// Requests of one app that broke one rule with one shape, refused or only warned about.
struct Group {
  std::string app;
  std::string rule;
  std::string shape;
  bool refused = false;
  uint64_t count = 0;
  std::vector<Example> examples;     // the first kMaxExamples
  std::vector<RequestRef> requests;  // all of them, in recording order
};

inline constexpr size_t kMaxExamples = 3;

struct Judgement {
  std::vector<Group> groups;  // refused first, then by app, rule, shape
  // Every request the candidate configuration refuses (whole, or some of its statements), in
  // recording order: what a live block-mode docguard would have refused.
  std::vector<RequestRef> refused;
  uint64_t connections = 0;
  uint64_t requests = 0;
  uint64_t unrecorded = 0;  // requests the recorder wrote as markers: not judged
  uint64_t malformed = 0;   // requests or replies the conversation could not read
  // Requests a rule could not judge offline: a query on a namespace whose indexes no recorded
  // listIndexes (or --facts-from) named, an update a $jsonSchema rule cannot judge without the
  // stored document, a push onto a document whose array length was never seen (under a tracked
  // array-length bound). "0 refused" with these above 0 is no clean bill.
  uint64_t guardrail_unknown = 0;
  uint64_t schema_unjudged = 0;
  uint64_t length_unknown = 0;
  uint64_t unverified_files = 0;  // data files read without a checksum to check them against
  std::vector<std::string> data_files;
};

// Replays every recorded request through a conversation of its own connection, against an engine
// holding `rules`, feeding recorded replies where the live path learns from them. With
// `facts_from` (a mongodump), the guardrail's index catalog starts from its collections' indexes,
// as a live docguard's starts from introspection.
base::Expected<Judgement> judge_recording(const std::filesystem::path& dir,
                                          std::shared_ptr<const rules::RuleSet> rules,
                                          uint32_t max_message_bytes, bool show_values,
                                          const std::string& facts_from = "",
                                          bool accept_torn_tail = false);

// Requests judged offline that no rule could judge; the sum of the Judgement's counts.
inline uint64_t not_judged(const Judgement& j) {
  return j.unrecorded + j.malformed + j.guardrail_unknown + j.schema_unjudged + j.length_unknown;
}

// The request's command (OP_MSG body with its document sequences as arrays) as relaxed extended
// JSON; every scalar value replaced by its type's name unless `show_values`. Bounded in length.
std::string request_example(codec::Bytes message, bool show_values);

std::string render_text(const Judgement& judgement);
std::string render_json(const Judgement& judgement);
std::string render_html(const Judgement& judgement);

}  // namespace docguard::tools::whatif
