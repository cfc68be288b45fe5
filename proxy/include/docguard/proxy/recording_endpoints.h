// The admin API of the traffic recorder: GET /recording, POST /recording/start (a JSON body
// may override the `recording:` settings), POST /recording/stop: its rows of the admin table
// (recording_admin_endpoints() in admin_endpoints.h). Behind the admin token.
#pragma once

#include <string>

#include "docguard/proxy/admin_endpoints.h"
#include "docguard/proxy/runtime.h"

namespace docguard::proxy {

// `settings` with the members of a JSON object applied (directory, apps, users, namespaces,
// sample, max_duration as "10s" or seconds, queue_bytes, max_file_bytes, max_total_bytes);
// A bad-input error says what is wrong with the body.
base::Expected<void> apply_recording_json(const std::string& body,
                                          settings::RecordingSettings& settings);

}  // namespace docguard::proxy
