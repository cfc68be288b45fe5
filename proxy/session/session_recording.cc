// What a session hands the traffic recorder: each request with the conversation's app, user,
// command and what docguard did with it, and each reply the client gets.
#include <algorithm>

#include "docguard/proxy/session.h"

namespace docguard::proxy {

void Session::record_request(codec::Bytes message, std::string_view verdict) {
  const auto& violations = conversation_.request_violations();
  const bool refused = std::any_of(violations.begin(), violations.end(),
                                   [](const auto& v) { return v.action == rules::Action::kBlock; });
  context_.recorder.on_request(
      recording_tap_, peer_, message,
      {conversation_.app_name(), conversation_.user(), conversation_.request_command(), verdict,
       conversation_.request_rule(), refused});
}

void Session::record_reply(codec::Bytes message) {
  context_.recorder.on_reply(recording_tap_, peer_, message,
                             {conversation_.app_name(), conversation_.user(), {}, {}});
}

}  // namespace docguard::proxy
