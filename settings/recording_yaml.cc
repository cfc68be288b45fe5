// `recording:`: the traffic recorder's settings (recording_settings.h).
#include <filesystem>

#include "docguard/settings/recording_settings.h"
#include "section_readers.h"

namespace docguard::settings {
namespace {

std::vector<std::string> string_list(const ConfigReader& r, const YAML::Node& node,
                                     const std::string& key) {
  std::vector<std::string> out;
  if (node.IsScalar()) {
    out.push_back(r.scalar(node, key));
    return out;
  }
  if (!node.IsSequence()) r.fail(node, key, "expected a list of strings");
  for (const auto& item : node) out.push_back(r.scalar(item, key));
  return out;
}

// A size past 2^63 would be undefined in the cast: refused here, its bound checked after.
uint64_t byte_setting(const ConfigReader& r, const YAML::Node& node, const std::string& key) {
  const double bytes = r.bytes(node, key);
  if (!(bytes < 9.2e18)) r.fail(node, key, "the size is too large");
  return static_cast<uint64_t>(bytes);
}

}  // namespace

void apply_recording_yaml(const ConfigReader& r, const YAML::Node& node,
                          RecordingSettings& settings) {
  r.check_keys(node,
               {"enabled", "directory", "apps", "users", "namespaces", "sample", "max_duration",
                "queue_bytes", "max_file_bytes", "max_total_bytes", "redact", "reply_documents",
                "api_without_token"},
               "recording");
  if (auto redact = node["redact"]) {
    r.check_keys(redact, {"fields", "namespaces", "key_vault", "max_sensitive_cursors"},
                 "recording.redact");
    codec::RedactionPolicy& policy = settings.redaction;
    if (auto v = redact["fields"]) policy.fields = string_list(r, v, "recording.redact.fields");
    if (auto v = redact["namespaces"]) {
      policy.namespaces = string_list(r, v, "recording.redact.namespaces");
    }
    if (auto v = redact["key_vault"]) {
      policy.key_vault = r.scalar(v, "recording.redact.key_vault");
      if (policy.key_vault.find('.') == std::string::npos) {
        r.fail(v, "recording.redact.key_vault", "expected \"db.collection\"");
      }
    }
    if (auto v = redact["max_sensitive_cursors"]) {
      policy.max_sensitive_cursors =
          static_cast<size_t>(r.count(v, "recording.redact.max_sensitive_cursors", 1e7));
    }
  }
  if (auto v = node["reply_documents"]) {
    settings.redaction.reply_documents = r.boolean(v, "recording.reply_documents");
  }
  if (auto v = node["enabled"]) settings.enabled = r.boolean(v, "recording.enabled");
  if (auto v = node["directory"]) {
    // Relative to the file that names it, not to wherever docguard happens to be started.
    std::filesystem::path directory(r.scalar(v, "recording.directory"));
    if (directory.is_relative() && !directory.empty()) {
      std::filesystem::path base = std::filesystem::path(r.file()).parent_path();
      if (base.empty()) base = ".";
      directory = std::filesystem::absolute(base) / directory;
    }
    settings.directory = directory.lexically_normal().string();
  }
  if (auto v = node["api_without_token"]) {
    settings.api_without_token = r.boolean(v, "recording.api_without_token");
  }
  if (auto v = node["apps"]) settings.apps = string_list(r, v, "recording.apps");
  if (auto v = node["users"]) settings.users = string_list(r, v, "recording.users");
  if (auto v = node["namespaces"]) {
    settings.namespaces = string_list(r, v, "recording.namespaces");
  }
  if (auto v = node["sample"]) settings.sample = r.ratio(v, "recording.sample");
  if (auto v = node["max_duration"]) {
    settings.max_duration = r.duration(v, "recording.max_duration");
  }
  if (auto v = node["queue_bytes"]) {
    settings.queue_bytes = byte_setting(r, v, "recording.queue_bytes");
  }
  if (auto v = node["max_file_bytes"]) {
    settings.max_file_bytes = byte_setting(r, v, "recording.max_file_bytes");
  }
  if (auto v = node["max_total_bytes"]) {
    settings.max_total_bytes = byte_setting(r, v, "recording.max_total_bytes");
  }
  // The directory is needed only to record: a section that leaves recording off may omit it.
  const auto usable =
      settings.enabled ? check_recording_settings(settings) : check_recording_bounds(settings);
  if (!usable) r.fail(node, "recording", usable.error().message);
}

}  // namespace docguard::settings
