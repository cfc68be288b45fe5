// The admin listener: /metrics, /healthz, /readyz, /status over plain HTTP/1.1.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "docguard/proxy/runtime.h"

namespace docguard::proxy {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// Accepts admin connections until the acceptor is closed.
boost::asio::awaitable<void> serve_admin(boost::asio::ip::tcp::acceptor& acceptor,
                                         ProxyRuntime& runtime);

// The live report's candidate-rule verdicts (Engine::candidate_verdicts): as the
// `candidate_verdicts` member of /report.json, and as a table inserted into /report's HTML
// before </body>.
std::string candidate_verdicts_json(const std::vector<rules::CandidateVerdicts>& verdicts);
std::string with_candidate_verdicts_json(std::string report,
                                         const std::vector<rules::CandidateVerdicts>& verdicts);
std::string with_candidate_verdicts_html(std::string report,
                                         const std::vector<rules::CandidateVerdicts>& verdicts);

// The $jsonSchema validators' census (Engine::validator_census): the `validators` member of
// /report.json, and a table in /report's HTML (validator_report.cc).
std::string with_validators_json(std::string report,
                                 const std::vector<rules::ValidatorCensus>& census);
std::string with_validators_html(std::string report,
                                 const std::vector<rules::ValidatorCensus>& census);

// The workload ledger (Engine::workload_report): the `workload` and `workload_overflow`
// members of /report.json, and a table in /report's HTML (workload_report.cc).
std::string with_workload_json(std::string report, const rules::WorkloadSnapshot& workload);
std::string with_workload_html(std::string report, const rules::WorkloadSnapshot& workload);

// Routes one request (method, target, Authorization header value, body). Exposed for tests.
boost::asio::awaitable<HttpResponse> route_admin(const std::string& method,
                                                 const std::string& target,
                                                 const std::string& authorization,
                                                 ProxyRuntime& runtime,
                                                 const std::string& body = "");

}  // namespace docguard::proxy
