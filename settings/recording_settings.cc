#include "docguard/settings/recording_settings.h"

namespace docguard::settings {

base::Expected<void> check_recording_settings(const RecordingSettings& settings) {
  const auto wrong = [](std::string why) {
    return base::Error{base::ErrorKind::kConfiguration, base::ErrorSource::kConfiguration,
                       std::move(why)};
  };
  if (settings.directory.empty()) return wrong("recording.directory is required");
  if (!(settings.sample > 0.0 && settings.sample <= 1.0)) {
    return wrong("recording.sample must be above 0 and at most 1");
  }
  if (settings.queue_bytes == 0) return wrong("recording.queue_bytes must be positive");
  if (settings.max_file_bytes == 0) return wrong("recording.max_file_bytes must be positive");
  if (settings.max_total_bytes == 0) return wrong("recording.max_total_bytes must be positive");
  return {};
}

}  // namespace docguard::settings
