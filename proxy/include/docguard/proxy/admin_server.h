// The admin listener: HTTP/1.1 (Boost.Beast) on the admin address, one request per connection,
// routed through the endpoint table (admin_endpoints.h); and the report sections the proxy adds.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "docguard/proxy/admin_endpoints.h"
#include "docguard/proxy/runtime.h"

namespace docguard::proxy {

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

}  // namespace docguard::proxy
