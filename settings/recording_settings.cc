#include "docguard/settings/recording_settings.h"

namespace docguard::settings {

std::string recording_settings_problem(const RecordingSettings& settings) {
  if (settings.directory.empty()) return "recording.directory is required";
  if (!(settings.sample > 0.0 && settings.sample <= 1.0)) {
    return "recording.sample must be above 0 and at most 1";
  }
  if (settings.queue_bytes == 0) return "recording.queue_bytes must be positive";
  if (settings.max_file_bytes == 0) return "recording.max_file_bytes must be positive";
  if (settings.max_total_bytes == 0) return "recording.max_total_bytes must be positive";
  return "";
}

}  // namespace docguard::settings
