// Recording of the traffic docguard relays (`recording:` in the file, or the admin API's
// POST /recording/start): where the files go, which connections are recorded, and the bounds
// that keep a recording from slowing live traffic or filling a disk.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "docguard/base/expected.h"
#include "docguard/codec/redaction_policy.h"

namespace docguard::settings {

struct RecordingSettings {
  bool enabled = false;   // start recording when docguard starts
  std::string directory;  // where the data files, side files and checksum.txt go; required
  // Filters; an empty list lets every connection through. apps: the driver's appName; users:
  // "name@db" or "name"; namespaces: "db.collection", "db.*" or "db".
  std::vector<std::string> apps;
  std::vector<std::string> users;
  std::vector<std::string> namespaces;
  double sample = 1.0;  // the share of connections recorded, decided once per connection
  std::chrono::milliseconds max_duration{0};  // 0: until stopped
  // Bytes waiting for the writer thread; past it the recording fails and traffic goes on.
  uint64_t queue_bytes = 64ull << 20;
  uint64_t max_file_bytes = 256ull << 20;  // a data file rotates before it grows past this
  uint64_t max_total_bytes = 10ull << 30;  // all files together; then recording stops
  // `redact:`: what docguard redacts beyond its own policy (fields at any depth, namespaces),
  // and where the key vault is. `reply_documents: false` keeps replies to their status.
  codec::RedactionPolicy redaction;
  // Whether POST /recording/start and /recording/stop answer without `admin.token` set: off, a
  // recording is started only by someone who holds the token (or by the file's `enabled`).
  bool api_without_token = false;
};

// The bounds the settings must stay in: a recording of at most 30 days, data files of 1 MiB to
// 16 GiB (a smaller bound would make a file per message), a queue of 1 KiB to 4 GiB (its
// memory), and all files together of 1 MiB to 1 PiB.
inline constexpr std::chrono::milliseconds kMaxRecordingDuration = std::chrono::hours(24 * 30);
inline constexpr uint64_t kMinRecordingFileBytes = 1ull << 20;
inline constexpr uint64_t kMaxRecordingFileBytes = 16ull << 30;
inline constexpr uint64_t kMinRecordingQueueBytes = 1ull << 10;
inline constexpr uint64_t kMaxRecordingQueueBytes = 4ull << 30;
inline constexpr uint64_t kMinRecordingTotalBytes = 1ull << 20;
inline constexpr uint64_t kMaxRecordingTotalBytes = 1ull << 50;

// Whether `settings` can be used; a configuration error says why not: a missing or relative
// directory, a sample outside (0, 1], a duration or a size outside its bounds above.
base::Expected<void> check_recording_settings(const RecordingSettings& settings);
// The same without the directory (a `recording:` section that leaves recording off may omit it).
base::Expected<void> check_recording_bounds(const RecordingSettings& settings);

}  // namespace docguard::settings
