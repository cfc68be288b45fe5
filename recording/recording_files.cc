#include "docguard/recording/recording_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "docguard/codec/crc32c.h"

namespace docguard::recording {
namespace {

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path) {
  if (errno == ELOOP) {
    throw std::runtime_error(what + " " + path.string() +
                             ": it is a symbolic link, which the recorder never follows");
  }
  if (errno == ENXIO) {  // opened for writing without blocking: a FIFO nobody reads
    throw std::runtime_error(what + " " + path.string() + ": it is a FIFO, not a regular file");
  }
  throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(errno));
}

// Makes the directories of `directory` that are missing, each readable by its owner only (the
// recording holds the traffic); those that exist are used as they are.
void make_private_directories(const std::filesystem::path& directory) {
  std::filesystem::path prefix;
  for (const auto& part : directory) {
    prefix /= part;
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) fail("cannot create", prefix);
  }
}

}  // namespace

RecordingFiles::RecordingFiles(std::filesystem::path directory, uint64_t max_file_bytes,
                               uint64_t max_total_bytes)
    : directory_(std::move(directory)),
      max_file_bytes_(max_file_bytes),
      max_total_bytes_(max_total_bytes) {}

RecordingFiles::~RecordingFiles() {
  try {
    close();
  } catch (const std::exception&) {
    // Closing on destruction is a last resort: the recorder closes and reports errors itself.
  }
  if (directory_fd_ >= 0) ::close(directory_fd_);
}

void RecordingFiles::open() {
  make_private_directories(directory_);
  // The directory is held open and every file made inside it by that handle: a directory
  // replaced after this check is not written to. Its last part must not be a symbolic link.
  directory_fd_ = ::open(directory_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (directory_fd_ < 0) fail("cannot open the directory", directory_);
  // Another user who owns the directory, or may write in it, could rename, replace or read
  // the recording's files (and plant checksum.txt): such a directory is refused, whether
  // docguard made it or found it.
  struct stat st {};
  if (::fstat(directory_fd_, &st) != 0) fail("cannot open the directory", directory_);
  if (st.st_uid != ::geteuid()) {
    throw std::runtime_error("cannot record in " + directory_.string() +
                             ": the directory is not owned by the user docguard runs as");
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    throw std::runtime_error("cannot record in " + directory_.string() +
                             ": the directory is writable by its group or others");
  }
  open_next();
}

bool RecordingFiles::taken(const std::string& name) const {
  struct stat st {};
  return ::fstatat(directory_fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

std::FILE* RecordingFiles::create_new(const std::string& name) const {
  // New, the owner's only, and never through a link planted under its name.
  const int fd = ::openat(directory_fd_, name.c_str(),
                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) fail("cannot create", directory_ / name);
  std::FILE* file = ::fdopen(fd, "wb");
  if (!file) {
    ::close(fd);
    fail("cannot create", directory_ / name);
  }
  return file;
}

void RecordingFiles::open_next() {
  // Named by the time, as the server names its files, so a directory's files sort in the
  // order they were written; a name taken already (two rotations in one millisecond, or an
  // earlier recording) moves on to the next millisecond.
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  std::string stem;
  while (true) {
    stem = std::to_string(millis);
    if (!taken(stem + ".bin") && !taken(stem + ".docguard.jsonl") &&
        (names_.empty() || stem + ".bin" > names_.back())) {
      break;
    }
    ++millis;
  }
  data_ = {};
  side_ = {};
  data_.name = stem + ".bin";
  side_.name = stem + ".docguard.jsonl";
  data_.file = create_new(data_.name);
  side_.file = create_new(side_.name);
  names_.push_back(data_.name);
}

void RecordingFiles::write_to(OpenFile& f, codec::Bytes bytes) {
  if (bytes.empty()) return;
  if (std::fwrite(bytes.data(), 1, bytes.size(), f.file) != bytes.size()) {
    fail("cannot write", directory_ / f.name);
  }
  f.crc = codec::crc32c(bytes, f.crc);
  f.size += bytes.size();
}

RecordingFiles::Written RecordingFiles::write(const PacketHeader& header, codec::Bytes message,
                                              std::string_view side_line) {
  scratch_.clear();
  append_packet(scratch_, header, message);
  // The side line counts too: the cap is what the recording takes on disk.
  const uint64_t side_bytes = side_line.empty() ? 0 : side_line.size() + 1;
  if (total_bytes_ + scratch_.size() + side_bytes > max_total_bytes_) return Written::kCapReached;
  if (!data_.file) throw std::runtime_error("the recording files are closed");
  if (data_.size > 0 && data_.size + scratch_.size() > max_file_bytes_) {
    finish(data_);
    finish(side_);
    open_next();
  }
  write_to(data_, scratch_);
  total_bytes_ += scratch_.size();
  ++packets_;
  if (!side_line.empty()) {
    write_to(side_, {reinterpret_cast<const uint8_t*>(side_line.data()), side_line.size()});
    write_to(side_, {reinterpret_cast<const uint8_t*>("\n"), 1});
    total_bytes_ += side_bytes;
  }
  return Written::kYes;
}

void RecordingFiles::flush() {
  for (OpenFile* f : {&data_, &side_}) {
    if (f->file && std::fflush(f->file) != 0) fail("cannot write", directory_ / f->name);
  }
}

void RecordingFiles::finish(OpenFile& f) {
  if (!f.file) return;
  const bool flushed = std::fclose(f.file) == 0;
  f.file = nullptr;
  if (!flushed) fail("cannot write", directory_ / f.name);
  // One line per finished file: its name and CRC-32C in hex, as the server's checksum.txt. An
  // earlier recording's list is added to; a link, a FIFO or another user's file is refused
  // (opened without blocking, then checked on the open handle itself).
  const auto path = directory_ / "checksum.txt";
  const int fd =
      ::openat(directory_fd_, "checksum.txt",
               O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd < 0) fail("cannot open", path);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    ::close(fd);
    throw std::runtime_error("cannot write " + path.string() +
                             ": it is not a regular file of the user docguard runs as");
  }
  const std::string line = fmt::format("{}\t{:x}\n", f.name, f.crc);
  const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  const int saved = errno;
  if (::close(fd) != 0 || !ok) {
    if (!ok) errno = saved;
    fail("cannot write", path);
  }
}

void RecordingFiles::close() {
  finish(data_);
  finish(side_);
}

}  // namespace docguard::recording
