// The walk behind references_policy_field (field_references.h).
#include "field_references.h"

#include <array>
#include <string_view>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/request_identity.h"
#include "document_redactor.h"

namespace docguard::codec {
namespace {

constexpr uint8_t kJavaScript = 0x0D;
constexpr uint8_t kJavaScriptWithScope = 0x0F;

// Operators whose argument runs JavaScript, which may read any field.
constexpr std::array<std::string_view, 3> kJavaScriptOperators = {"$where", "$function",
                                                                  "$accumulator"};

// Whether `part` (one name between dots) is a part of one of the policy's fields.
bool is_listed_part(const RedactionPolicy& policy, std::string_view part) {
  if (part.empty()) return false;
  for (const std::string& field : policy.fields) {
    const std::string_view f = field;
    for (size_t start = 0; start <= f.size();) {
      const size_t dot = f.find('.', start);
      const size_t end = dot == std::string_view::npos ? f.size() : dot;
      if (f.substr(start, end - start) == part) return true;
      start = end + 1;
    }
  }
  return false;
}

// Whether a dotted path has a part that is a part of a listed field.
bool path_has_listed_part(const RedactionPolicy& policy, std::string_view path) {
  for (size_t start = 0; start <= path.size();) {
    const size_t dot = path.find('.', start);
    const size_t end = dot == std::string_view::npos ? path.size() : dot;
    if (is_listed_part(policy, path.substr(start, end - start))) return true;
    start = end + 1;
  }
  return false;
}

// Whether a string value is a field path that may reach a listed field's value.
bool references_by_path(const RedactionPolicy& policy, std::string_view text) {
  if (text.size() < 2 || text[0] != '$') return false;
  if (text[1] != '$') return path_has_listed_part(policy, text.substr(1));
  for (const std::string_view root : {std::string_view("$$ROOT"), std::string_view("$$CURRENT")}) {
    if (text == root) return true;  // the whole document, any field of it
    if (text.starts_with(root) && text[root.size()] == '.') {
      return path_has_listed_part(policy, text.substr(root.size() + 1));
    }
  }
  return false;  // another variable: judged where it is bound
}

// $getField / $setField: "name", or {field: "name" or an expression, ...}.
bool names_listed_field(const RedactionPolicy& policy, const BsonElements& it) {
  if (it.holds_utf8()) return path_has_listed_part(policy, it.utf8());
  if (!it.holds_document()) return true;
  BsonElements field(it.container());
  if (!field.find("field")) return false;
  return !field.holds_utf8() || path_has_listed_part(policy, field.utf8());
}

struct Walk {
  const RedactionPolicy& policy;
  bool binds = false;  // a `let` or an update statement's `c`
  bool names = false;  // a key or a string naming a listed part

  // Whether the walk found a reference (or could not finish).
  bool references(const BsonView& doc, int depth, bool is_array) {
    if (depth > kMaxRedactionDepth || !well_framed(doc)) return true;
    BsonElements it(doc);
    while (it.next()) {
      const std::string_view key = it.key;
      if (it.type == kJavaScript || it.type == kJavaScriptWithScope) return true;
      if (!is_array) {
        for (const std::string_view op : kJavaScriptOperators) {
          if (key == op) return true;
        }
        if ((key == "$getField" || key == "$setField") && names_listed_field(policy, it)) {
          return true;
        }
        binds = binds || key == "let" || key == "c";
        names = names || path_has_listed_part(policy, key);
      }
      if (it.holds_utf8()) {
        const std::string_view text = it.utf8();
        if (references_by_path(policy, text)) return true;
        names = names || path_has_listed_part(policy, text);
      }
      if (is_container(it.type) && references(it.container(), depth + 1, !it.holds_document())) {
        return true;
      }
    }
    return it.malformed();
  }
};

}  // namespace

bool references_policy_field(const BsonView& body, const OpMsg* msg,
                             const RedactionPolicy& policy) {
  if (policy.fields.empty()) return false;
  const BsonView command = legacy_command_document(body);
  if (first_key(command) == "distinct") {
    BsonElements key(command);
    if (key.find("key") && (!key.holds_utf8() || path_has_listed_part(policy, key.utf8()))) {
      return true;
    }
  }
  Walk walk{policy};
  if (walk.references(body, 0, false)) return true;
  // The statements may come apart from the body that binds their variables (`let`).
  if (msg != nullptr) {
    for (const DocumentSequence& sequence : msg->sequences) {
      for (const BsonView& document : sequence.documents) {
        if (walk.references(document, 0, false)) return true;
      }
    }
  }
  return walk.binds && walk.names;
}

}  // namespace docguard::codec
