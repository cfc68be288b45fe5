// Comparing a secret (the admin token) with what a client sent, in a time that does not depend
// on where the two first differ: an early-exit comparison lets a client find a token byte by
// byte from response times.
#pragma once

#include <string_view>

namespace docguard::base {

// Whether `given` equals `secret`. Its time depends only on the lengths of the two, never on
// their contents.
bool equal_in_constant_time(std::string_view given, std::string_view secret);

}  // namespace docguard::base
