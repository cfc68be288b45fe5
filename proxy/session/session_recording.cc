// What a session hands the traffic recorder: each request with the conversation's app, user,
// command and what docguard did with it, and each reply the client gets.
#include <string>

#include "docguard/proxy/session.h"

namespace docguard::proxy {

void Session::record_request(codec::Bytes message, std::string_view verdict) {
  const auto& violations = conversation_.request_violations();
  bool refused = false;
  std::string statements;  // the refused statements of a batch forwarded in part
  for (const auto& v : violations) {
    if (v.action != rules::Action::kBlock) continue;
    refused = true;
    if (v.statement_index < 0 || verdict != "forwarded") continue;
    const std::string index = std::to_string(v.statement_index);
    if (("," + statements + ",").find("," + index + ",") != std::string::npos) continue;
    if (!statements.empty()) statements += ",";
    statements += index;
  }
  context_.recorder.on_request(
      recording_tap_, peer_, message,
      {conversation_.app_name(), conversation_.user(), conversation_.request_command(), verdict,
       conversation_.request_rule(), refused, statements, server_, upstream_resolved_});
}

void Session::record_reply(codec::Bytes message) {
  recording::RecordedFacts facts{conversation_.app_name(), conversation_.user(), {}, {}};
  facts.upstream = server_;
  facts.upstream_resolved = upstream_resolved_;
  context_.recorder.on_reply(recording_tap_, peer_, message, facts);
}

}  // namespace docguard::proxy
