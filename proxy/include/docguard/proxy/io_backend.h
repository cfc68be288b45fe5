// Which kernel interface the io threads use for sockets and timers. Asio picks its
// reactor at compile time (BOOST_ASIO_DISABLE_EPOLL + BOOST_ASIO_HAS_IO_URING select io_uring),
// so one binary has one backend; the choice at start is between binaries: an io_uring build
// whose kernel refuses io_uring re-executes an epoll build installed next to it.
#pragma once

#include <string>

namespace docguard::proxy {

// "io_uring" or "epoll": the backend this binary was built with (-DDOCGUARD_IO_URING).
const char* io_backend_name();

// Why this epoll binary runs instead of the io_uring build that re-executed it ("" when it was
// started directly): the start-up log line and /status report it.
std::string io_backend_fallback_reason();

// Whether the kernel lets this process create an io_uring (it may be compiled out, disabled by
// kernel.io_uring_disabled, or filtered by seccomp in a container). On false, `why` says why.
bool io_uring_available(std::string& why);

// Called once at start, before any io object exists. In an io_uring build on a kernel that
// refuses io_uring, or when DOCGUARD_IO_BACKEND=epoll is set: re-executes `docguard-epoll` from the
// same directory with the same arguments (does not return) if there is one, else prints why and
// returns false. DOCGUARD_IO_BACKEND=epoll is also how a test makes an io_uring build take the
// fallback without a seccomp filter (tests/io_backend/ tests both ways).
bool ensure_io_backend(char** argv);

}  // namespace docguard::proxy
