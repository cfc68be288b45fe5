#include "docguard/settings/recording_settings.h"

#include <string>

namespace docguard::settings {
namespace {

base::Error wrong(std::string why) {
  return base::Error{base::ErrorKind::kConfiguration, base::ErrorSource::kConfiguration,
                     std::move(why)};
}

// "1MiB" for a whole number of MiB, the bytes otherwise: what the message of a bound shows.
std::string size_text(uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0)
    return std::to_string(bytes >> 30) + "GiB";
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0)
    return std::to_string(bytes >> 20) + "MiB";
  if (bytes >= (1ull << 10) && bytes % (1ull << 10) == 0)
    return std::to_string(bytes >> 10) + "KiB";
  return std::to_string(bytes);
}

base::Expected<void> within(const char* key, uint64_t value, uint64_t min, uint64_t max) {
  if (value >= min && value <= max) return {};
  return wrong("recording." + std::string(key) + " must be between " + size_text(min) + " and " +
               size_text(max) + ", not " + std::to_string(value));
}

}  // namespace

base::Expected<void> check_recording_bounds(const RecordingSettings& settings) {
  if (!(settings.sample > 0.0 && settings.sample <= 1.0)) {
    return wrong("recording.sample must be above 0 and at most 1");
  }
  if (settings.max_duration.count() < 0 || settings.max_duration > kMaxRecordingDuration) {
    return wrong("recording.max_duration must be at most 30 days (0: until stopped)");
  }
  if (auto ok = within("queue_bytes", settings.queue_bytes, kMinRecordingQueueBytes,
                       kMaxRecordingQueueBytes);
      !ok) {
    return ok;
  }
  if (auto ok = within("max_file_bytes", settings.max_file_bytes, kMinRecordingFileBytes,
                       kMaxRecordingFileBytes);
      !ok) {
    return ok;
  }
  return within("max_total_bytes", settings.max_total_bytes, kMinRecordingTotalBytes,
                kMaxRecordingTotalBytes);
}

base::Expected<void> check_recording_settings(const RecordingSettings& settings) {
  if (settings.directory.empty()) return wrong("recording.directory is required");
  // A relative directory would be resolved against whatever directory docguard runs in: the
  // file's are resolved against the file's own directory when read, the API's are refused.
  if (settings.directory.front() != '/') {
    return wrong("recording.directory must be an absolute path, not '" + settings.directory + "'");
  }
  return check_recording_bounds(settings);
}

}  // namespace docguard::settings
