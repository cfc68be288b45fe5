#include "docguard/rules/client_scope.h"

#include <string>
#include <vector>

namespace docguard::rules {

namespace {

bool any_glob(const std::vector<std::string>& globs, std::string_view text) {
  for (const std::string& g : globs) {
    if (glob_match(g, text)) return true;
  }
  return false;
}

bool user_matches(const std::vector<std::string>& globs, std::string_view user) {
  // A user is "name@db". A name may hold an '@' (an email address); a database name in practice
  // does not, so the last one splits them.
  const size_t at = user.rfind('@');
  const std::string_view name = at == std::string_view::npos ? user : user.substr(0, at);
  for (const std::string& g : globs) {
    if (glob_match(g, user) || glob_match(g, name)) return true;
  }
  return false;
}

}  // namespace

bool scope_matches(const RuleScope& scope, const ClientIdentity& who) {
  if (!scope.apps.empty() && !any_glob(scope.apps, who.app)) return false;
  if (!scope.users.empty() && (who.user.empty() || !user_matches(scope.users, who.user))) {
    return false;
  }
  if (!scope.clients.empty()) {
    if (who.address == nullptr) return false;
    bool inside = false;
    for (const Cidr& c : scope.clients) inside = inside || c.contains(*who.address);
    if (!inside) return false;
  }
  return true;
}

}  // namespace docguard::rules
