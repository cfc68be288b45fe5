#include "docguard/recording/recording_files.h"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "docguard/codec/crc32c.h"

namespace docguard::recording {
namespace {

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path) {
  throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(errno));
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
}

void RecordingFiles::open() {
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec) throw std::runtime_error("cannot create " + directory_.string() + ": " + ec.message());
  open_next();
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
    if (!std::filesystem::exists(directory_ / (stem + ".bin")) &&
        (names_.empty() || stem + ".bin" > names_.back())) {
      break;
    }
    ++millis;
  }
  data_ = {};
  side_ = {};
  data_.name = stem + ".bin";
  side_.name = stem + ".docguard.jsonl";
  data_.file = std::fopen((directory_ / data_.name).c_str(), "wbx");
  if (!data_.file) fail("cannot create", directory_ / data_.name);
  side_.file = std::fopen((directory_ / side_.name).c_str(), "wbx");
  if (!side_.file) fail("cannot create", directory_ / side_.name);
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

void RecordingFiles::finish(OpenFile& f) {
  if (!f.file) return;
  const bool flushed = std::fclose(f.file) == 0;
  f.file = nullptr;
  if (!flushed) fail("cannot write", directory_ / f.name);
  // One line per finished file: its name and CRC-32C in hex, as the server's checksum.txt.
  const auto path = directory_ / "checksum.txt";
  std::FILE* sums = std::fopen(path.c_str(), "ab");
  if (!sums) fail("cannot open", path);
  const std::string line = fmt::format("{}\t{:x}\n", f.name, f.crc);
  const bool ok = std::fwrite(line.data(), 1, line.size(), sums) == line.size();
  if (std::fclose(sums) != 0 || !ok) fail("cannot write", path);
}

void RecordingFiles::close() {
  finish(data_);
  finish(side_);
}

}  // namespace docguard::recording
