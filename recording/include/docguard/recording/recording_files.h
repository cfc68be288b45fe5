// The files of one traffic recording, in the layout the MongoDB server's own traffic recorder
// writes and its replay tool reads (docs/recording.md): data files of packets named by the
// time they were opened (<milliseconds since the epoch>.bin), rotated by size, a side file of
// docguard's own facts next to each (<same name>.docguard.jsonl), and checksum.txt with the
// CRC-32C of every file once it is complete.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/codec/message.h"
#include "docguard/codec/recording_packet.h"

namespace docguard::recording {

// The packet layout is codec's (one definition for the writer and the readers).
using codec::append_packet;
using codec::PacketHeader;
using codec::RecordedEvent;

class RecordingFiles {
 public:
  RecordingFiles(std::filesystem::path directory, uint64_t max_file_bytes,
                 uint64_t max_total_bytes);
  ~RecordingFiles();
  RecordingFiles(const RecordingFiles&) = delete;
  RecordingFiles& operator=(const RecordingFiles&) = delete;

  // Makes the directory (0700, the parts that are missing) and opens the first data file
  // (0600, as every file of the recording); throws std::runtime_error, also when the directory
  // is a symbolic link, is not owned by the user docguard runs as or is writable by its group
  // or others, or a file's name is taken by a link planted there.
  void open();
  enum class Written { kYes, kCapReached };
  // Writes one packet and its side line (one JSON object without the newline, or "" for
  // none), rotating first when the packet would take the data file past max_file_bytes (a
  // single larger packet gets a file of its own). kCapReached, and nothing written, when the
  // packet and its side line would take all files past max_total_bytes. Throws std::runtime_error
  // on a write error.
  Written write(const PacketHeader& header, codec::Bytes message, std::string_view side_line);
  // Hands what was written so far to the system (not a sync): a process killed afterwards
  // leaves it in the files. Throws std::runtime_error on a write error.
  void flush();
  // Flushes, closes the open files and adds their checksums. Idempotent.
  void close();

  uint64_t bytes() const { return total_bytes_; }  // all data and side files
  uint64_t packets() const { return packets_; }
  const std::vector<std::string>& file_names() const { return names_; }  // data files, in order
  const std::filesystem::path& directory() const { return directory_; }

 private:
  struct OpenFile {
    std::FILE* file = nullptr;
    std::string name;
    uint32_t crc = 0;
    uint64_t size = 0;
  };
  void open_next();
  bool taken(const std::string& name) const;             // anything by that name in the directory
  std::FILE* create_new(const std::string& name) const;  // throws when the name is taken
  void write_to(OpenFile& f, codec::Bytes bytes);
  void finish(OpenFile& f);

  std::filesystem::path directory_;
  int directory_fd_ = -1;  // the directory, held open while the files are written
  uint64_t max_file_bytes_;
  uint64_t max_total_bytes_;
  OpenFile data_;
  OpenFile side_;
  std::vector<uint8_t> scratch_;
  std::vector<std::string> names_;
  uint64_t total_bytes_ = 0;
  uint64_t packets_ = 0;
};

}  // namespace docguard::recording
