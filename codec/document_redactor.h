// The walk that takes secrets out of one BSON document, at any depth (private to codec/; the
// recording's redaction, recording_redaction.cc, applies it to every document of a message).
#pragma once

#include <bson/bson.h>

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/bson_view.h"
#include "docguard/codec/redaction_policy.h"

namespace docguard::codec {

// Deeper documents than this are not walked: the message becomes a marker. The server nests
// at most about 180 levels; a recording has no use for more than this.
inline constexpr int kMaxRedactionDepth = 200;

// Whether `name` is one of `names` (the redaction's short lists of kept or secret names).
inline bool among(std::span<const std::string_view> names, std::string_view name) {
  for (const std::string_view n : names) {
    if (n == name) return true;
  }
  return false;
}

class DocumentRedactor {
 public:
  // `reply`: the documents walked are a reply's, whose error texts quote stored values.
  explicit DocumentRedactor(const RedactionPolicy& policy, bool reply = false)
      : policy_(policy), reply_(reply) {}

  // Copies `in` into `out` with every secret replaced by the marker and $clusterTime dropped.
  // `path` is where `in` sits (for the policy's dotted fields): "" for a command's body.
  // `keep`, when not empty, are the only keys of `in` kept: any other is replaced (its
  // value is a secret whatever its name). False for a malformed or too deeply nested document.
  bool copy(const BsonView& in, bson_t* out, std::string_view path = {},
            std::span<const std::string_view> keep = {});

  // Appends the element `it` is on to `out`, its secrets taken out as copy() does. False for a
  // malformed or too deeply nested value.
  bool copy_element(const bson_iter_t& it, bson_t* out) {
    path_.clear();
    return copy_member(it, out, 0, {});
  }

  // Whether anything was replaced or dropped since construction.
  bool changed() const { return changed_; }

  // Whether `doc` (a request's body) reads or writes a secret namespace anywhere: its own
  // collection in `db`, a `$lookup`/`$graphLookup` `from`, a `$unionWith`, an `$out`/`$merge`
  // target, a `renameCollection`'s names, an applyOps entry's `ns`. A document that cannot be
  // scanned (too deep, malformed) counts as one that does.
  bool touches_secret_namespace(const BsonView& doc, std::string_view db) const;

  // Appends the marker under `key`.
  void replace(bson_t* out, std::string_view key);

 private:
  bool copy_at(const BsonView& in, bson_t* out, int depth, std::span<const std::string_view> keep);
  // Whether copying would change nothing (no key to drop or replace at any depth): most
  // documents, which are then copied as their bytes stand.
  bool clean(const BsonView& in, int depth, std::span<const std::string_view> keep);
  bool clean_value(const bson_iter_t& it, int depth);
  bool clean_container(const BsonElements& it, int depth);
  bool clean_array(const BsonView& array, int depth);
  // Whether a member's value is a secret: its key, or its text (`text`, null for another type).
  // Extends path_ by the key when the policy names fields; the caller restores it.
  bool secret_member(std::string_view key, const std::string_view* text,
                     std::span<const std::string_view> keep);
  // Whether a reply's member is an error text that may quote a stored secret.
  bool quotes_stored_values(std::string_view key, const std::string_view* text) const;
  // Appends the parts of `key` that name a stored field to path_ (policy fields only): array
  // positions, positional and other operators left out, an arrayFilters identifier replaced by
  // the array it filters. Whether anything was appended.
  bool extend_path(std::string_view key);
  std::string_view resolve_identifier(std::string_view id) const;
  // The $[id] identifiers of an update document and the array paths they stand for.
  void collect_filter_ids(const BsonView& update);
  bool copy_member(const bson_iter_t& it, bson_t* out, int depth,
                   std::span<const std::string_view> keep);
  bool copy_value(const bson_iter_t& it, bson_t* out, int depth);
  bool is_secret_ns_value(const bson_iter_t& it, std::string_view db, bool whole_namespace) const;
  bool scan(const BsonView& doc, std::string_view db, int depth, bool top) const;

  const RedactionPolicy& policy_;
  // The fields' parts of the keys down to here, joined by '.', kept only when the policy names
  // fields.
  std::string path_;
  // The arrayFilters identifiers of the update statement being copied: (id, array path).
  std::vector<std::pair<std::string, std::string>> filter_ids_;
  bool reply_ = false;
  bool changed_ = false;
};

}  // namespace docguard::codec
