// Reads a recording directory back (docs/recording.md): the data files in name order, which is
// write order, their packets one at a time, each data file checked against its CRC-32C in
// checksum.txt when it has one. The offline tools (what-if, replay) read through it, so a torn
// or altered recording is reported once, here, with the file and byte offset.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "docguard/base/expected.h"
#include "docguard/recording/recorded_source.h"
#include "docguard/recording/recording_files.h"

namespace docguard::recording {

// What a recording's side file says of one packet (docs/recording.md): the connection's app and
// user at that moment, a request's verdict and deciding rule, and whether the recorder replaced
// the message by a marker. Empty when the packet has no side line.
struct SideFacts {
  std::string app;
  std::string user;
  std::string command;  // requests: the command's name, its namespace and its shape's text
  std::string ns;
  std::string shape;
  std::string verdict;  // requests: forwarded, answered_by_docguard, nothing
  std::string rule;
  bool refused = false;
  bool unrecorded = false;
  bool present = false;  // the packet has a side line
  // A batch forwarded in part: the indexes of the statements docguard refused.
  std::vector<int32_t> refused_statements;
  // Where the traffic went: a session_start's upstream server as configured and as connected,
  // a hello reply's cluster identity (the first reply showing it).
  std::string upstream;
  std::string upstream_resolved;
  SourceIdentity source;
};

struct RecordedPacket {
  RecordedEvent event = RecordedEvent::kRequest;
  uint64_t connection = 0;
  std::string session;
  uint64_t offset_micros = 0;
  uint64_t order = 0;
  std::vector<uint8_t> message;  // the whole wire message, header first; empty for session events
  SideFacts side;                // from the side file beside the data file, read in step with it
};

struct ReadOptions {
  // A data file without a checksum (a docguard stopped before it closed the file) may end in a
  // packet cut short: read as far as its packets are whole instead of failing.
  bool accept_torn_tail = false;
};

class RecordingReader {
 public:
  // A packet larger than this is taken for corruption: the largest message docguard relays
  // (limits.max_message_bytes is at most 48 MiB) plus the packet's own fields.
  static constexpr uint32_t kMaxPacketBytes = (48U << 20) + 4096;

  // Lists DIR's data files; an error when DIR cannot be read or holds none.
  static base::Expected<RecordingReader> open(const std::filesystem::path& dir,
                                              ReadOptions options = {});

  RecordingReader(RecordingReader&& other) noexcept;
  RecordingReader& operator=(RecordingReader&& other) noexcept;
  RecordingReader(const RecordingReader&) = delete;
  RecordingReader& operator=(const RecordingReader&) = delete;
  ~RecordingReader();

  // The next packet, across files in order; nullopt after the last. An error names the file
  // and offset: a packet cut short or of an impossible size, or a file whose CRC-32C is not
  // the one checksum.txt gives. A data file without a checksum (a docguard stopped before it
  // closed the file) is read unverified; a packet cut short in it is an error too, unless the
  // options accept a torn tail. The side file is read line by line beside it: memory stays one
  // packet and one line, whatever the recording's size.
  base::Expected<std::optional<RecordedPacket>> next();

  const std::vector<std::string>& data_files() const { return files_; }
  const std::filesystem::path& directory() const { return directory_; }
  // Files read to their end whose checksum matched; those read without a checksum to check.
  int verified_files() const { return verified_; }
  int unverified_files() const { return unverified_; }

 private:
  RecordingReader() = default;
  base::Expected<bool> open_next_file();  // false: no file left
  base::Expected<void> finish_file();
  bool read(uint8_t* out, size_t n);
  base::Expected<void> read_side(RecordedPacket& packet);
  base::Error corrupt(const std::string& what) const;
  std::string torn_hint() const;

  std::filesystem::path directory_;
  std::vector<std::string> files_;
  std::map<std::string, uint32_t> checksums_;  // file name -> CRC-32C from checksum.txt
  size_t next_file_ = 0;
  std::FILE* file_ = nullptr;
  std::FILE* side_ = nullptr;  // the open data file's side file, when it has one
  ReadOptions options_;
  std::string side_line_;  // a side line read ahead: it belongs to a later packet
  uint64_t offset_ = 0;    // in the open file
  uint32_t crc_ = 0;       // of the open file's bytes read so far
  int verified_ = 0;
  int unverified_ = 0;
};

}  // namespace docguard::recording
