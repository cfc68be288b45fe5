#include "docguard/base/private_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>

namespace docguard::base {
namespace {

Error io_error(const std::string& what, const std::filesystem::path& path, int error_number) {
  return Error{ErrorKind::kIo, ErrorSource::kDocguard,
               what + " " + path.string() + ": " + std::strerror(error_number), path.string()};
}

const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  return "a device";
}

Error not_regular(const std::filesystem::path& path, const char* kind) {
  return bad_input(path.string() + " is " + kind + ", not a regular file: refused");
}

}  // namespace

Expected<std::FILE*> open_regular_file(const std::filesystem::path& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int error_number = errno;
    if (error_number == ENOENT) return static_cast<std::FILE*>(nullptr);
    if (error_number == ELOOP) return not_regular(path, "a symbolic link");
    return io_error("cannot open", path, error_number);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error_number = errno;
    ::close(fd);
    return io_error("cannot read", path, error_number);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return not_regular(path, kind_of(st.st_mode));
  }
  // A regular file: reads block as usual again.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    const int error_number = errno;
    ::close(fd);
    return io_error("cannot read", path, error_number);
  }
  std::FILE* file = ::fdopen(fd, "rb");
  if (file == nullptr) {
    const int error_number = errno;
    ::close(fd);
    return io_error("cannot open", path, error_number);
  }
  return file;
}

Expected<void> replace_file(const std::filesystem::path& path, std::string_view text) {
  // A name of its own in the same directory (a rename does not cross file systems); O_EXCL
  // and O_NOFOLLOW, so a name planted there is never written through.
  std::random_device random;
  const std::filesystem::path temporary =
      path.parent_path() / ("." + path.filename().string() + "." + std::to_string(::getpid()) +
                            "." + std::to_string(random()) + ".tmp");
  const int fd =
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return io_error("cannot write", path, errno);
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  int error_number = written == text.size() ? 0 : (errno != 0 ? errno : EIO);
  if (::close(fd) != 0 && error_number == 0) error_number = errno;
  if (error_number == 0 && ::rename(temporary.c_str(), path.c_str()) != 0) error_number = errno;
  if (error_number != 0) {
    ::unlink(temporary.c_str());
    return io_error("cannot write", path, error_number);
  }
  return {};
}

}  // namespace docguard::base
