// The wildcard match of names in docguard's settings: `*` stands for any run of characters and
// `?` for one (rules' `match` namespaces, their `apps` and `users`).
#pragma once

#include <string_view>

namespace docguard::base {

bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace docguard::base
