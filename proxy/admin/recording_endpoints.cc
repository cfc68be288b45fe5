#include "docguard/proxy/recording_endpoints.h"

#include <bson/bson.h>

#include <algorithm>
#include <optional>
#include <string_view>

#include "docguard/base/json_writer.h"
#include "docguard/codec/bson_elements.h"
#include "docguard/codec/bson_view.h"
#include "docguard/proxy/coroutines.h"

namespace docguard::proxy {
namespace {

std::optional<std::vector<std::string>> strings_of(const codec::BsonElements& it) {
  std::vector<std::string> out;
  if (it.holds_utf8()) {
    out.emplace_back(it.utf8());
    return out;
  }
  if (!it.holds_array()) return std::nullopt;
  for (codec::BsonElements child(it.container()); child.next();) {
    if (!child.holds_utf8()) return std::nullopt;
    out.emplace_back(child.utf8());
  }
  return out;
}

std::optional<double> number_of(const codec::BsonElements& it) {
  if (!it.holds_number()) return std::nullopt;
  return it.as_double();
}

HttpResponse json_response(int status, std::string body) {
  return {status, "application/json", std::move(body) + "\n"};
}

HttpResponse error_response(int status, std::string_view why, ProxyRuntime& rt) {
  json::Writer w;
  w.begin_object().member("error", why).key("recording").raw(rt.recorder.status_json());
  w.end_object();
  return json_response(status, w.take());
}

}  // namespace

base::Expected<void> apply_recording_json(const std::string& body, settings::RecordingSettings& s) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return {};
  bson_error_t error;
  bson_t* doc = bson_new_from_json(reinterpret_cast<const uint8_t*>(body.data()),
                                   static_cast<ssize_t>(body.size()), &error);
  if (!doc) return base::bad_input(std::string("the body is not a JSON object: ") + error.message);
  const codec::OwnedBson owned(doc);
  for (codec::BsonElements it(doc); it.next();) {
    const std::string key(it.key);
    bool ok = true;
    if (key == "directory") {
      ok = it.holds_utf8();
      if (ok) s.directory = it.utf8();
    } else if (key == "apps" || key == "users" || key == "namespaces") {
      auto list = strings_of(it);
      ok = list.has_value();
      if (ok) (key == "apps" ? s.apps : key == "users" ? s.users : s.namespaces) = *list;
    } else if (key == "reply_documents") {
      ok = it.holds_bool();
      if (ok) s.redaction.reply_documents = it.as_bool();
    } else if (key == "sample") {
      const auto v = number_of(it);
      ok = v.has_value();
      if (ok) s.sample = *v;
    } else if (key == "max_duration") {
      if (it.holds_utf8()) {
        const auto d = settings::parse_duration(it.utf8());
        ok = d.has_value();
        if (ok) s.max_duration = *d;
      } else if (const auto v = number_of(it); v && *v >= 0) {
        // Held below 1e12 s before the cast (which past 2^63 ms would be undefined); the
        // settings' own bound (30 days) then refuses it with its reason.
        s.max_duration = std::chrono::milliseconds(static_cast<int64_t>(std::min(*v, 1e12) * 1000));
      } else {
        ok = false;
      }
    } else if (key == "queue_bytes" || key == "max_file_bytes" || key == "max_total_bytes") {
      const auto v = number_of(it);
      ok = v.has_value() && *v >= 1 && *v < 1e18;
      if (ok) {
        (key == "queue_bytes"      ? s.queue_bytes
         : key == "max_file_bytes" ? s.max_file_bytes
                                   : s.max_total_bytes) = static_cast<uint64_t>(*v);
      }
    } else {
      return base::bad_input("unknown member '" + key + "'");
    }
    if (!ok) return base::bad_input("member '" + key + "' has a wrong type or value");
  }
  return {};
}

namespace {

awaitable<HttpResponse> recording_status(const AdminRequest&, ProxyRuntime& rt) {
  co_return json_response(200, rt.recorder.status_json());
}

// Without a token, anything that reaches the listener could record the traffic: the recording
// endpoints that change state need the token, or the operator's explicit leave.
std::optional<HttpResponse> refuse_without_token(ProxyRuntime& rt) {
  if (!rt.admin_token.empty() || rt.config.recording.api_without_token) return std::nullopt;
  return error_response(403,
                        "recording through the admin API needs admin.token set (or "
                        "recording.api_without_token: true)",
                        rt);
}

// What a refused start answers: 409 only when another recording holds the recorder; settings
// that cannot be used are the request's fault (400); the files that cannot be made, the host's.
int start_refusal_status(const base::Error& error) {
  if (error.kind == base::ErrorKind::kRefused) return 409;
  if (error.kind == base::ErrorKind::kIo) return 500;
  return 400;
}

awaitable<HttpResponse> recording_start(const AdminRequest& request, ProxyRuntime& rt) {
  if (auto refused = refuse_without_token(rt)) co_return *refused;
  settings::RecordingSettings settings = rt.config.recording;
  if (const auto applied = apply_recording_json(std::string(request.body), settings); !applied) {
    co_return error_response(400, applied.error().message, rt);
  }
  if (const auto usable = settings::check_recording_settings(settings); !usable) {
    co_return error_response(400, usable.error().message, rt);
  }
  if (const auto started = rt.recorder.start(settings); !started) {
    co_return error_response(start_refusal_status(started.error()), started.error().message, rt);
  }
  co_return json_response(200, rt.recorder.status_json());
}

awaitable<HttpResponse> recording_stop(const AdminRequest&, ProxyRuntime& rt) {
  if (auto refused = refuse_without_token(rt)) co_return *refused;
  if (!rt.recorder.stop()) co_return error_response(409, "no recording is running", rt);
  co_return json_response(200, rt.recorder.status_json());
}

constexpr AdminEndpoint kRecordingEndpoints[] = {
    {"/recording", kRead, true, "the traffic recorder's state (JSON)", recording_status},
    {"/recording/start", kPost, true, "start recording; a JSON body overrides `recording:`",
     recording_start},
    {"/recording/stop", kPost, true, "stop recording and seal its files", recording_stop},
};

}  // namespace

std::span<const AdminEndpoint> recording_admin_endpoints() { return kRecordingEndpoints; }

}  // namespace docguard::proxy
