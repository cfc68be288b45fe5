// The cluster library's results are base's: a value or an Error. An Error from the cluster names
// the URI option or host at fault in `subject`, so `--check-config` can point the user at it,
// and, for a command the server refused, carries the server's error code and a kind derived from
// it, so callers tell "not authorized" from "not supported" from "timed out" by kind.
#pragma once

#include "docguard/base/error.h"
#include "docguard/base/expected.h"

namespace docguard::cluster {

using base::Error;
using base::ErrorKind;
using base::ErrorSource;
template <class T>
using Expected = base::Expected<T>;

}  // namespace docguard::cluster
