// The admin listener: HTTP/1.1 (Boost.Beast) on the admin address, one request per connection,
// routed through the endpoint table (admin_endpoints.h); and the report sections the proxy adds.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "docguard/advisor/report.h"
#include "docguard/proxy/admin_endpoints.h"
#include "docguard/proxy/runtime.h"

namespace docguard::proxy {

// Accepts admin connections until the acceptor is closed.
boost::asio::awaitable<void> serve_admin(boost::asio::ip::tcp::acceptor& acceptor,
                                         ProxyRuntime& runtime);

// The live report's sections the proxy adds to the advisor's report (/report and /report.json):
// - the candidate rules' verdicts per client app (Engine::candidate_verdicts): the
//   `candidate_verdicts` member and a table (candidate_report.cc);
// - the $jsonSchema validators' census (Engine::validator_census): the `validators` member and a
//   table (validator_report.cc);
// - the workload ledger (Engine::workload_report): the `workload` and `workload_overflow`
//   members and a table (workload_report.cc).
std::string candidate_verdicts_json(const std::vector<rules::CandidateVerdicts>& verdicts);
advisor::ReportSection candidate_verdicts_section(
    const std::vector<rules::CandidateVerdicts>& verdicts);
advisor::ReportSection validators_section(const std::vector<rules::ValidatorCensus>& census);
advisor::ReportSection workload_section(const rules::WorkloadSnapshot& workload);

}  // namespace docguard::proxy
