#include "docguard/proxy/io_backend.h"

#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string_view>

namespace docguard::proxy {
namespace {

// Set for the re-executed epoll binary: the reason travels through its environment.
constexpr const char* kFallbackReasonVariable = "DOCGUARD_IO_FALLBACK_REASON";

}  // namespace

const char* io_backend_name() {
#ifdef DOCGUARD_IO_URING
  return "io_uring";
#else
  return "epoll";
#endif
}

std::string io_backend_fallback_reason() {
#ifdef DOCGUARD_IO_URING
  return "";
#else
  const char* why = std::getenv(kFallbackReasonVariable);
  return why != nullptr ? why : "";
#endif
}

bool io_uring_available(std::string& why) {
#ifdef __NR_io_uring_setup
  // The raw system call: no liburing needed, so an epoll build can report it too.
  io_uring_params params{};
  const long fd = ::syscall(__NR_io_uring_setup, 4, &params);
  if (fd >= 0) {
    ::close(static_cast<int>(fd));
    return true;
  }
  why = std::string("io_uring_setup: ") + std::strerror(errno);
  if (errno == EPERM) why += " (kernel.io_uring_disabled or a seccomp filter)";
  return false;
#else
  why = "no io_uring_setup system call on this platform";
  return false;
#endif
}

bool ensure_io_backend(char** argv) {
#ifdef DOCGUARD_IO_URING
  std::string why;
  const char* wanted = std::getenv("DOCGUARD_IO_BACKEND");  // an operator's choice at start
  if (wanted != nullptr && std::string_view(wanted) == "epoll") {
    why = "DOCGUARD_IO_BACKEND=epoll";
  } else if (io_uring_available(why)) {
    return true;
  }
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const auto fallback = self.parent_path() / "docguard-epoll";
  if (!ec && ::access(fallback.c_str(), X_OK) == 0) {
    std::cerr << "docguard: io_uring unavailable (" << why << "): running " << fallback.string()
              << " (epoll) instead\n";
    ::setenv(kFallbackReasonVariable, why.c_str(), 1);
    ::execv(fallback.c_str(), argv);
    std::cerr << "docguard: cannot execute " << fallback.string() << ": " << std::strerror(errno)
              << "\n";
    return false;
  }
  std::cerr << "docguard: this build uses io_uring, which this kernel refuses (" << why
            << "); install an epoll build (cmake -DDOCGUARD_IO_URING=OFF) as " << fallback.string()
            << " to fall back to it automatically\n";
  return false;
#else
  (void)argv;
  return true;
#endif
}

}  // namespace docguard::proxy
