// What a traffic recording must never hold, as a policy rather than a list of commands: secrets
// are recognised by where they sit (a field's name, at any depth, in requests and replies alike),
// by the namespace a document belongs to (the users, roles and key-vault collections, and the
// user's own), and by the shape of an authentication step (conversationId with payload).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/codec/sensitive_cursors.h"

namespace docguard::codec {

struct RedactionPolicy {
  // The user's own fields (`recording.redact.fields`): a key name ("ssn", redacted wherever a key
  // of that name appears) or a dotted path ("card.number", redacted where a key's path, array
  // positions left out, ends with it).
  std::vector<std::string> fields;
  // The user's own namespaces (`recording.redact.namespaces`): "db.collection", "db.*" or "db".
  // Every document read from or written to them is redacted, as for the built-in ones.
  std::vector<std::string> namespaces;
  // The Queryable Encryption / CSFLE key vault ("db.collection"); its documents hold key material.
  std::string key_vault = "encryption.__keyVault";
  // false: replies keep their status (ok, counts, codes, cursor ids) and lose their documents.
  bool reply_documents = true;
  // How many cursors of sensitive requests a recording remembers, so that their getMores are
  // redacted as the request that opened them; past it, every getMore and killCursors is.
  size_t max_sensitive_cursors = SensitiveCursors::kDefaultLimit;
};

// The policy with no user additions: what docguard redacts whatever the configuration says.
const RedactionPolicy& default_redaction_policy();

// Whether a field of this name holds a secret wherever it appears: passwords, SCRAM credentials
// and their salts, key material, encryption tokens, cloud keys, speculative authentication.
bool is_secret_field(std::string_view key);

// Whether `text` (an error message) names a field that holds a secret wherever it appears, so
// may quote its value ("dup key: { passwordHash: ... }").
bool mentions_secret_field(std::string_view text);

// Whether the documents of `db`.`collection` are secret under `policy`: the users and roles
// collections (system.users, system.roles in any database; admin.tempusers, admin.temproles,
// admin.system.new_users, admin.system.backup_users, where users are staged), the keys that sign
// and validate cluster times (admin.system.keys, config.external_validation_keys and its former
// admin.system.external_validation_keys), the key vault, and the policy's own namespaces. Names
// are compared without regard to ASCII case (the database's as the server does, the collection's
// as a safe superset).
bool is_secret_namespace(const RedactionPolicy& policy, std::string_view db,
                         std::string_view collection);

// Whether `text` is a URI that carries a password ("scheme://user:password@host...").
bool holds_uri_password(std::string_view text);

// In a path, a part that stands for any array path: an arrayFilters identifier whose array
// the statement does not name.
inline constexpr std::string_view kAnyPath = "\x01";

// Whether the key at `path` (the stored fields' names joined by '.': array positions, positional
// and other operators left out) is one of the policy's own fields. A kAnyPath part matches any
// run of parts, so a field is matched whenever some array path in its place would match it.
bool is_policy_field(const RedactionPolicy& policy, std::string_view path);

}  // namespace docguard::codec
