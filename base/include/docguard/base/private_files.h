// Opening and writing files where another user may have planted something under the name: a
// recording directory or a report directory on a shared host. A symbolic link is never followed
// at the last part of a name, a FIFO or a device never blocks the caller, and a written file is
// made new beside its target and renamed over it (a rename replaces a planted link itself,
// never writes through it).
#pragma once

#include <cstdio>
#include <filesystem>
#include <string_view>

#include "docguard/base/expected.h"

namespace docguard::base {

// PATH opened for reading ("rb") when it is a regular file; nullptr when nothing has that name;
// a kBadInput error naming PATH when it is a link, a FIFO, a device or a directory (opened
// without following and without blocking, then checked on the open handle), a kIo error when it
// cannot be opened.
Expected<std::FILE*> open_regular_file(const std::filesystem::path& path);

// Replaces PATH's contents with TEXT: written to a new file in PATH's directory (created with
// O_EXCL and O_NOFOLLOW, readable by its owner only), then renamed over PATH. A kIo
// error names PATH; the new file is removed then.
Expected<void> replace_file(const std::filesystem::path& path, std::string_view text);

}  // namespace docguard::base
