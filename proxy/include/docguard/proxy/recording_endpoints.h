// The admin API of the traffic recorder: GET /recording, POST /recording/start (a JSON body
// may override the `recording:` settings), POST /recording/stop. Behind the admin token like
// every other endpoint but /healthz (admin_server.cc checks it first).
#pragma once

#include <optional>
#include <string>

#include "docguard/proxy/admin_server.h"
#include "docguard/proxy/runtime.h"

namespace docguard::proxy {

// The answer when `path` is one of the recorder's, else nothing.
std::optional<HttpResponse> route_recording(const std::string& method, const std::string& path,
                                            const std::string& body, ProxyRuntime& runtime);

// `settings` with the members of a JSON object applied (directory, apps, users, namespaces,
// sample, max_duration as "10s" or seconds, queue_bytes, max_file_bytes, max_total_bytes);
// "" or what is wrong with the body.
std::string apply_recording_json(const std::string& body, settings::RecordingSettings& settings);

}  // namespace docguard::proxy
