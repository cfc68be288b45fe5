// The recording's redaction policy (redaction_policy.h): which fields and namespaces are secret.
#include "docguard/codec/redaction_policy.h"

#include <algorithm>
#include <array>

namespace docguard::codec {

namespace {

// Field names that hold a secret wherever they appear. The server's own: a user's `pwd` and its
// `credentials` ({SCRAM-SHA-1: {iterationCount, salt, storedKey, serverKey}}), the key vault's
// `keyMaterial`, Queryable Encryption's compaction and cleanup tokens, speculative
// authentication in hello, `customData` of users (free-form, set beside a password). The cloud
// providers' keys as they appear in KMS settings and in `$out` / `$merge` to object stores.
constexpr std::array<std::string_view, 17> kSecretFields = {
    "pwd",           "credentials",      "storedKey",     "serverKey",    "salt",
    "keyMaterial",   "compactionTokens", "cleanupTokens", "customData",   "speculativeAuthenticate",
    "privateKey",    "secretAccessKey",  "sessionToken",  "clientSecret", "accessKeyId",
    "authorization", "ldapQueryPassword"};

// Whether `key`, in ASCII lower case, holds `word` (lower case): on the writer thread for every
// key of every recorded message, so no locale and no allocation.
bool contains_lower(std::string_view key, std::string_view word) {
  if (key.size() < word.size()) return false;
  for (size_t i = 0; i + word.size() <= key.size(); ++i) {
    if ((key[i] | 0x20) != word[0]) continue;  // the first letter, in either case
    size_t j = 1;
    while (j < word.size() && (key[i + j] | 0x20) == word[j]) ++j;
    if (j == word.size()) return true;
  }
  return false;
}

// Whether two names are equal but for ASCII case. The server refuses two databases whose names
// differ only in case, so "Admin" can only be "admin"; collections are compared the same way, a
// superset that costs at most a redacted collection whose name differs in case from a secret one.
bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] | 0x20) : a[i];
    const char y = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] | 0x20) : b[i];
    if (x != y) return false;
  }
  return true;
}

// "db.collection", "db.*" or "db" against a namespace.
bool namespace_matches(std::string_view pattern, std::string_view db, std::string_view coll) {
  const size_t dot = pattern.find('.');
  if (dot == std::string_view::npos) return same_name(pattern, db);
  if (!same_name(pattern.substr(0, dot), db)) return false;
  const std::string_view rest = pattern.substr(dot + 1);
  return rest == "*" || same_name(rest, coll);
}

// The server's own secret namespaces: its users and roles in every database, and in admin (or
// config) the users mongorestore and the server stage, and the keys that sign $clusterTime
// (admin.system.keys) and validate other clusters' (config.external_validation_keys, formerly
// in admin).
constexpr std::array<std::string_view, 2> kSecretInEveryDatabase = {"system.users", "system.roles"};
constexpr std::array<std::string_view, 7> kSecretNamespaces = {
    "admin.tempusers",
    "admin.temproles",
    "admin.system.keys",
    "admin.system.external_validation_keys",
    "admin.system.new_users",
    "admin.system.backup_users",
    "config.external_validation_keys"};

}  // namespace

const RedactionPolicy& default_redaction_policy() {
  static const RedactionPolicy policy;
  return policy;
}

bool is_secret_field(std::string_view key) {
  if (key.size() < 3) return false;  // "pwd" is the shortest
  // Each part of the key: a dotted key names a path ({$set: {"profile.pwd": ...}}), secret when
  // any of its parts is, as the value lands under that part. An undotted key is one part.
  for (size_t start = 0; start <= key.size();) {
    const size_t dot = key.find('.', start);
    const size_t end = dot == std::string_view::npos ? key.size() : dot;
    const std::string_view part = key.substr(start, end - start);
    if (std::find(kSecretFields.begin(), kSecretFields.end(), part) != kSecretFields.end()) {
      return true;
    }
    start = end + 1;
  }
  if (key.size() < 6) return false;  // "secret" is the shortest word below
  // An application's own "password", "passwordHash", "apiSecret", "client_secret", ...
  return contains_lower(key, "password") || contains_lower(key, "secret") ||
         contains_lower(key, "passphrase");
}

bool mentions_secret_field(std::string_view text) {
  return std::any_of(kSecretFields.begin(), kSecretFields.end(),
                     [&](std::string_view name) { return text.find(name) != text.npos; }) ||
         contains_lower(text, "password") || contains_lower(text, "secret") ||
         contains_lower(text, "passphrase");
}

bool is_secret_namespace(const RedactionPolicy& policy, std::string_view db,
                         std::string_view collection) {
  for (const std::string_view name : kSecretInEveryDatabase) {
    if (same_name(collection, name)) return true;
  }
  for (const std::string_view ns : kSecretNamespaces) {
    if (namespace_matches(ns, db, collection)) return true;
  }
  if (!policy.key_vault.empty() && namespace_matches(policy.key_vault, db, collection)) {
    return true;
  }
  return std::any_of(policy.namespaces.begin(), policy.namespaces.end(),
                     [&](const std::string& p) { return namespace_matches(p, db, collection); });
}

bool holds_uri_password(std::string_view text) {
  const size_t scheme = text.find("://");
  if (scheme == std::string_view::npos) return false;
  const std::string_view rest = text.substr(scheme + 3);
  const size_t at = rest.find('@');
  if (at == std::string_view::npos) return false;
  const std::string_view userinfo = rest.substr(0, at);
  // userinfo ends at the authority's end: a '/' before the '@' means the '@' is in a path.
  return userinfo.find('/') == std::string_view::npos &&
         userinfo.find(':') != std::string_view::npos;
}

bool is_policy_field(const RedactionPolicy& policy, std::string_view path) {
  // After an identifier that may be any array path, only what follows it is known.
  const size_t any = path.rfind(kAnyPath);
  const bool open = any != std::string_view::npos;
  if (open) path = path.substr(std::min(path.size(), any + kAnyPath.size() + 1));
  if (open && path.empty()) return true;  // the identifier's own value: any field's
  for (const std::string& field : policy.fields) {
    // `field` ends the path ("x.cards.number" for "cards.number")...
    if (path.size() >= field.size() && path.ends_with(field) &&
        (path.size() == field.size() || path[path.size() - field.size() - 1] == '.')) {
      return true;
    }
    // ... or, after an identifier, the path ends `field` ("number" for "cards.number").
    if (open && field.size() > path.size() && field.ends_with(path) &&
        field[field.size() - path.size() - 1] == '.') {
      return true;
    }
  }
  return false;
}

}  // namespace docguard::codec
