// The deep walk of the recording's redaction (document_redactor.h).
#include "document_redactor.h"

#include <algorithm>
#include <array>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/command_view.h"
#include "docguard/codec/recording_redaction.h"

namespace docguard::codec {

namespace {

// What stays of an authentication step's document ({conversationId, payload, ...}), whatever
// request it answers: whether the step worked, never the server's nonce, salt or signature.
constexpr std::array<std::string_view, 7> kKeptInAuthStep = {
    "ok", "done", "conversationId", "code", "codeName", "errmsg", "operationTime"};
// What stays of a document that names a secret namespace in `ns` (a cursor, an applyOps or
// oplog entry, a change event): where it is and what kind it is, not its contents.
constexpr std::array<std::string_view, 12> kKeptBesideSecretNamespace = {
    "ns",          "id",       "op", "ui", "ts", "t", "v", "wall", "operationType",
    "clusterTime", "wallTime", "_id"};

// Keys naming a collection of the request's database in a stage or command argument; a view's
// `viewOn` (create, collMod) names the collection the view reads.
bool is_collection_key(std::string_view key) {
  return key == "from" || key == "coll" || key == "$unionWith" || key == "$out" || key == "into" ||
         key == "collection" || key == "viewOn";
}

// "db.collection" into its parts; the whole text as a collection of `db` when there is no dot.
std::pair<std::string_view, std::string_view> namespace_in(std::string_view ns,
                                                           std::string_view db) {
  if (ns.find('.') == std::string_view::npos) return {db, ns};
  return split_namespace(ns);
}

// Whether a part of a dotted key names a field of the stored document, as the policy's fields
// are written: array positions ("0"), positional operators ("$", "$[]", "$[id]") and operators
// ("$set", "$each", "$elemMatch", "$in", ...) do not.
bool is_path_part(std::string_view part) {
  if (part.empty() || part[0] == '$') return false;
  return !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string_view last_part(std::string_view path) {
  const size_t dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

}  // namespace

void DocumentRedactor::replace(bson_t* out, std::string_view key) {
  changed_ = true;
  bson_append_utf8(out, key.data(), static_cast<int>(key.size()), kRedactedMarker.data(),
                   static_cast<int>(kRedactedMarker.size()));
}

bool DocumentRedactor::copy(const BsonView& in, bson_t* out, std::string_view path,
                            std::span<const std::string_view> keep) {
  if (!policy_.fields.empty()) path_.assign(path);
  if (clean(in, 0, keep)) {  // most documents: nothing to replace, copied as they are
    bson_t source;
    return bson_init_static(&source, in.data, in.size) && bson_concat(out, &source);
  }
  return copy_at(in, out, 0, keep);
}

bool DocumentRedactor::secret_member(std::string_view key, const std::string_view* text,
                                     std::span<const std::string_view> keep) {
  if (is_secret_field(key) || (!keep.empty() && !among(keep, key))) return true;
  if (reply_ && quotes_stored_values(key, text)) return true;
  if (!policy_.fields.empty() && extend_path(key) && is_policy_field(policy_, path_)) return true;
  return text != nullptr && holds_uri_password(*text);
}

bool DocumentRedactor::quotes_stored_values(std::string_view key,
                                            const std::string_view* text) const {
  // A validation failure's details quote the document's values under names no rule can follow.
  if (key == "errInfo") return true;
  // An error's text may quote a value: "E11000 duplicate key error ... dup key: { f: ... }",
  // "Cannot create field 'x' in element {...}". Where the policy names fields, any of them may
  // be quoted; without, only one the text names.
  if (key != "errmsg") return false;
  return !policy_.fields.empty() || (text != nullptr && mentions_secret_field(*text));
}

bool DocumentRedactor::extend_path(std::string_view key) {
  bool extended = false;
  for (size_t start = 0; start <= key.size();) {
    const size_t dot = key.find('.', start);
    const size_t end = dot == std::string_view::npos ? key.size() : dot;
    const std::string_view part = key.substr(start, end - start);
    start = end + 1;
    if (!is_path_part(part)) continue;
    // The first part below an update's arrayFilters is an identifier: the array it filters.
    const bool identifier = last_part(path_) == "arrayFilters";
    if (!path_.empty()) path_ += '.';
    if (identifier) {
      path_ += resolve_identifier(part);
    } else {
      path_ += part;
    }
    extended = true;
  }
  return extended;
}

std::string_view DocumentRedactor::resolve_identifier(std::string_view id) const {
  for (const auto& [name, array_path] : filter_ids_) {
    if (name == id && !array_path.empty()) return array_path;
  }
  return kAnyPath;  // not named by the statement's update: any array, so any field
}

void DocumentRedactor::collect_filter_ids(const BsonView& update) {
  // {$set: {"cards.$[c].number": ...}}: `c` stands for the elements of `cards`.
  BsonElements op(update);
  while (op.next()) {
    if (!op.holds_document()) continue;
    BsonElements field(op.container());
    while (field.next()) {
      const std::string_view key = field.key;
      std::string prefix;
      for (size_t start = 0; start <= key.size();) {
        const size_t dot = key.find('.', start);
        const size_t end = dot == std::string_view::npos ? key.size() : dot;
        const std::string_view part = key.substr(start, end - start);
        start = end + 1;
        if (part.size() > 3 && part.starts_with("$[") && part.ends_with("]")) {
          filter_ids_.emplace_back(std::string(part.substr(2, part.size() - 3)), prefix);
        } else if (is_path_part(part)) {
          if (!prefix.empty()) prefix += '.';
          prefix += part;
        }
      }
    }
  }
}

// The walk that finds nothing to change runs over every recorded document: it uses codec's own
// element walk, a fraction of libbson's iterator's cost.
bool DocumentRedactor::clean(const BsonView& in, int depth,
                             std::span<const std::string_view> keep) {
  if (depth > kMaxRedactionDepth || !well_framed(in)) return false;
  bool conversation = false;
  bool payload = false;
  BsonElements it(in);
  while (it.next()) {
    const std::string_view key = it.key;
    conversation = conversation || key == "conversationId";
    payload = payload || key == "payload";
    if (key == "$clusterTime") return false;
    if (key == "ns" && (it.holds_utf8() || it.holds_document())) {
      bson_iter_t probe;
      if (!it.to_iter(&probe) || is_secret_ns_value(probe, {}, true)) return false;
    }
    std::string_view text;
    if (it.holds_utf8()) text = it.utf8();
    const size_t path_size = path_.size();
    const bool ok = !secret_member(key, it.holds_utf8() ? &text : nullptr, keep) &&
                    (!is_container(it.type) || clean_container(it, depth));
    path_.resize(path_size);
    if (!ok) return false;
  }
  return !it.malformed() && !(conversation && payload);
}

bool DocumentRedactor::clean_container(const BsonElements& it, int depth) {
  if (it.holds_document()) return clean(it.container(), depth + 1, {});
  return clean_array(it.container(), depth + 1);
}

bool DocumentRedactor::clean_array(const BsonView& array, int depth) {
  if (depth > kMaxRedactionDepth || !well_framed(array)) return false;
  BsonElements element(array);
  while (element.next()) {
    if (element.holds_utf8() && holds_uri_password(element.utf8())) return false;
    if (is_container(element.type) && !clean_container(element, depth)) return false;
  }
  return !element.malformed();
}

bool DocumentRedactor::clean_value(const bson_iter_t& it, int depth) {
  if (BSON_ITER_HOLDS_DOCUMENT(&it)) return clean(view_of(it), depth + 1, {});
  if (BSON_ITER_HOLDS_ARRAY(&it)) return clean_array(view_of(it), depth + 1);
  return true;
}

bool DocumentRedactor::is_secret_ns_value(const bson_iter_t& it, std::string_view db,
                                          bool whole_namespace) const {
  if (BSON_ITER_HOLDS_UTF8(&it)) {
    if (!whole_namespace) return is_secret_namespace(policy_, db, utf8_of(it));
    const auto [d, c] = namespace_in(utf8_of(it), db);
    return is_secret_namespace(policy_, d, c);
  }
  if (BSON_ITER_HOLDS_DOCUMENT(&it)) {  // {db, coll}: a change event's, or a stage's target
    const BsonView doc = view_of(it);
    const std::string_view d = find_string(doc, "db");
    const std::string_view c = find_string(doc, "coll");
    return !c.empty() && is_secret_namespace(policy_, d.empty() ? db : d, c);
  }
  return false;
}

bool DocumentRedactor::copy_at(const BsonView& in, bson_t* out, int depth,
                               std::span<const std::string_view> keep) {
  if (depth > kMaxRedactionDepth) return false;
  bson_t source;
  if (in.empty() || !bson_init_static(&source, in.data, in.size)) return false;
  bson_iter_t it;
  if (!bson_iter_init(&it, &source)) return false;
  // A look at the document's own keys first: some shapes make all but a few of them secret.
  bool conversation = false;
  bool payload = false;
  bool secret_ns = false;
  bool array_filters = false;
  BsonView update;
  for (bson_iter_t probe = it; bson_iter_next(&probe);) {
    const std::string_view key = key_of(probe);
    conversation = conversation || key == "conversationId";
    payload = payload || key == "payload";
    secret_ns = secret_ns || (key == "ns" && is_secret_ns_value(probe, {}, true));
    array_filters = array_filters || key == "arrayFilters";
    if ((key == "u" || key == "update" || key == "updateMods") &&
        BSON_ITER_HOLDS_DOCUMENT(&probe)) {
      update = view_of(probe);
    }
  }
  const BsonView filtered_update = array_filters ? update : BsonView{};
  if (keep.empty() && conversation && payload) keep = kKeptInAuthStep;
  if (keep.empty() && secret_ns) keep = kKeptBesideSecretNamespace;
  // An update statement with arrayFilters: its identifiers resolved from its update's $[id]s,
  // for the walk of this document only.
  std::vector<std::pair<std::string, std::string>> outer_ids;
  const bool statement = !policy_.fields.empty() && filtered_update.data != nullptr;
  if (statement) {
    outer_ids.swap(filter_ids_);
    collect_filter_ids(filtered_update);
  }
  bool ok = true;
  while (ok && bson_iter_next(&it)) ok = copy_member(it, out, depth, keep);
  if (statement) filter_ids_.swap(outer_ids);
  return ok;
}

bool DocumentRedactor::copy_member(const bson_iter_t& it, bson_t* out, int depth,
                                   std::span<const std::string_view> keep) {
  const std::string_view key = key_of(it);
  if (key == "$clusterTime") {  // the cluster's signature
    changed_ = true;
    return true;
  }
  const size_t path_size = path_.size();
  const std::string_view text = utf8_of(it);
  const bool secret = secret_member(key, BSON_ITER_HOLDS_UTF8(&it) ? &text : nullptr, keep);
  bool ok = true;
  if (secret) {
    replace(out, key);
  } else {
    ok = copy_value(it, out, depth);
  }
  path_.resize(path_size);
  return ok;
}

bool DocumentRedactor::copy_value(const bson_iter_t& it, bson_t* out, int depth) {
  const std::string_view key = key_of(it);
  const int key_size = static_cast<int>(key.size());
  if ((BSON_ITER_HOLDS_DOCUMENT(&it) || BSON_ITER_HOLDS_ARRAY(&it)) && clean_value(it, depth)) {
    bson_iter_t whole = it;  // nothing to replace below: the bytes as they are
    return bson_append_iter(out, key.data(), key_size, &whole);
  }
  if (BSON_ITER_HOLDS_DOCUMENT(&it)) {
    bson_t child;
    bson_append_document_begin(out, key.data(), key_size, &child);
    const bool ok = copy_at(view_of(it), &child, depth + 1, {});
    bson_append_document_end(out, &child);
    return ok;
  }
  if (BSON_ITER_HOLDS_ARRAY(&it)) {
    // Array positions are not part of a field's path: `items.sku` names every item's sku.
    const size_t path_size = path_.size();
    bson_t child;
    bson_append_array_begin(out, key.data(), key_size, &child);
    bson_t source;
    const BsonView array = view_of(it);
    bool ok = bson_init_static(&source, array.data, array.size);
    bson_iter_t element;
    if (ok && bson_iter_init(&element, &source)) {
      while (ok && bson_iter_next(&element)) {
        if (BSON_ITER_HOLDS_UTF8(&element) && holds_uri_password(utf8_of(element))) {
          replace(&child, key_of(element));
        } else {
          ok = copy_value(element, &child, depth + 1);
        }
        path_.resize(path_size);
      }
    } else {
      ok = false;
    }
    bson_append_array_end(out, &child);
    return ok;
  }
  bson_iter_t copy = it;
  return bson_append_iter(out, key.data(), key_size, &copy);
}

bool DocumentRedactor::scan(const BsonView& doc, std::string_view db, int depth, bool top) const {
  // A document too deep or too broken to scan is taken for a secret one: the caller then keeps
  // only the command's envelope.
  if (depth > kMaxRedactionDepth || !well_framed(doc)) return true;
  bool first = top;
  BsonElements it(doc);
  while (it.next()) {
    const std::string_view key = it.key;
    // A command's own collection is its first value; renameCollection names whole namespaces.
    if (first && it.holds_utf8() && key != "renameCollection" &&
        is_secret_namespace(policy_, db, it.utf8())) {
      return true;
    }
    first = false;
    const bool whole = key == "ns" || key == "to" || key == "renameCollection";
    if (is_collection_key(key) || whole || key == "$merge") {
      bson_iter_t probe;
      if (!it.to_iter(&probe)) return true;
      if (is_secret_ns_value(probe, db, whole)) return true;
    }
    // An explain's argument is a command of its own: its first member names its collection.
    const bool command = key == "explain" && it.holds_document();
    if (is_container(it.type) && scan(it.container(), db, depth + 1, command)) return true;
  }
  return it.malformed();
}

bool DocumentRedactor::touches_secret_namespace(const BsonView& doc, std::string_view db) const {
  return scan(doc, db, 0, true);
}

}  // namespace docguard::codec
