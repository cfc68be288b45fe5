// The admin endpoints' table and the proxy's own handlers; the recorder's rows are in
// recording_endpoints.cc.
#include "docguard/proxy/admin_endpoints.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <vector>

#include "docguard/base/json_writer.h"
#include "docguard/proxy/admin_request_guard.h"
#include "docguard/proxy/admin_server.h"
#include "docguard/proxy/collection_facts_json.h"
#include "docguard/proxy/coroutines.h"

namespace docguard::proxy {

using namespace asio::experimental::awaitable_operators;

namespace {

awaitable<bool> upstream_reachable(ProxyRuntime& rt) {
  auto executor = co_await asio::this_coro::executor;
  tcp::resolver resolver(executor);
  const HostPort seed = upstream_first_seed(rt.config);
  auto [rec, endpoints] =
      co_await resolver.async_resolve(seed.host, std::to_string(seed.port), kUseTuple);
  if (rec) co_return false;
  tcp::socket socket(executor);
  asio::steady_timer timer(executor,
                           std::min(rt.config.connect_timeout, std::chrono::milliseconds(2000)));
  auto result =
      co_await (asio::async_connect(socket, endpoints, kUseTuple) || timer.async_wait(kUseTuple));
  co_return result.index() == 0 && !std::get<0>(std::get<0>(result));
}

// A plain single host keeps its old meaning (a connection succeeds) so an outage shows at once;
// in front of a cluster, "up" means a writable server is selectable.
bool plain_single_host(const ProxyRuntime& rt) {
  return rt.config.upstream.seeds.size() == 1 && !rt.config.upstream.is_srv &&
         rt.config.upstream.replica_set.empty();
}

bool writable_known(const ProxyRuntime& rt) {
  const auto topology = rt.router ? rt.router->snapshot() : nullptr;
  return topology && topology->has_writable();
}

awaitable<HttpResponse> healthz(const AdminRequest&, ProxyRuntime&) {
  co_return HttpResponse{200, "text/plain; charset=utf-8", "ok\n"};
}

awaitable<HttpResponse> metrics(const AdminRequest&, ProxyRuntime& rt) {
  const bool up = plain_single_host(rt) ? co_await upstream_reachable(rt) : writable_known(rt);
  rt.metrics.upstream_up.Set(up ? 1 : 0);
  rt.metrics.update_array_gauges(rt.engine);
  rt.metrics.update_findings(rt.advisor.findings());
  rt.limit_etas.update(rt.engine.limit_forecasts(),
                       rt.config.advisor.forecast_series_per_namespace);
  rt.introspection_metrics.update_collections(rt.advisor.collection_facts());
  co_return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", rt.metrics.serialize()};
}

// Ready = a writable server is selectable (for a plain single host not yet discovered by the
// monitor, a connection to it succeeds: what a session would do).
awaitable<HttpResponse> readyz(const AdminRequest&, ProxyRuntime& rt) {
  const auto topology = rt.router ? rt.router->snapshot() : nullptr;
  const bool up = (topology && topology->has_writable()) ||
                  (plain_single_host(rt) && co_await upstream_reachable(rt));
  rt.metrics.upstream_up.Set(up ? 1 : 0);
  if (up) co_return HttpResponse{200, "text/plain", "ready\n"};
  co_return HttpResponse{
      503, "text/plain",
      "no writable upstream server in " + rt.config.upstream.redacted + " (topology " +
          std::string(topology ? cluster::to_string(topology->type) : "Unknown") + ")\n"};
}

// The engine's statistics with what docguard knows of each collection, its own reads of the
// cluster, the recorder and the upstream topology as more members.
awaitable<HttpResponse> status(const AdminRequest&, ProxyRuntime& rt) {
  json::Writer w;
  w.begin_object();
  rt.engine.write_status(w);
  w.key("collection_facts").raw(collection_facts_json(rt.advisor)).key("introspection");
  if (rt.introspector) {
    w.raw(rt.introspector->status_json());
  } else {
    w.begin_object().member("enabled", false).end_object();
  }
  w.key("recording").raw(rt.recorder.status_json());
  // Said where an operator looks: an admin API that other hosts may use without a token is
  // one the settings accepted (admin.allow_without_token), never one docguard chose.
  const bool open = rt.admin_token.empty() && !settings::is_loopback_host(rt.config.admin.host);
  w.key("admin").begin_object().member("listen", rt.config.admin.to_string());
  w.member("token_required", !rt.admin_token.empty()).member("open_without_token", open);
  w.end_object();
  if (const auto topology = rt.router ? rt.router->snapshot() : nullptr) {
    w.key("upstream").begin_object().member("uri", rt.config.upstream.redacted);
    w.key("topology").raw(cluster::to_json(*topology)).end_object();
  }
  w.end_object();
  co_return HttpResponse{200, "application/json", w.take()};
}

// /report and /report.json: the advisor's report with the sections the engine adds (candidate
// rules' verdicts, the validators' census, the workload ledger).
std::string full_report(ProxyRuntime& rt, advisor::ReportFormat format) {
  return rt.advisor.render(format, {candidate_verdicts_section(rt.engine.candidate_verdicts()),
                                    validators_section(rt.engine.validator_census()),
                                    workload_section(rt.engine.workload_report())});
}

awaitable<HttpResponse> report_html(const AdminRequest&, ProxyRuntime& rt) {
  co_return HttpResponse{200, "text/html; charset=utf-8",
                         full_report(rt, advisor::ReportFormat::kHtml)};
}

awaitable<HttpResponse> report_json(const AdminRequest&, ProxyRuntime& rt) {
  co_return HttpResponse{200, "application/json", full_report(rt, advisor::ReportFormat::kJson)};
}

constexpr AdminEndpoint kProxyEndpoints[] = {
    {"/metrics", kRead, true, "Prometheus metrics", metrics},
    {"/healthz", kRead, false, "liveness: docguard answers (never needs the token)", healthz, true},
    {"/readyz", kRead, false, "readiness: a writable upstream server is selectable", readyz, true},
    {"/status", kRead, true, "the engine's statistics, collection facts, topology (JSON)", status},
    {"/report", kRead, true, "the design advisor's live report (HTML)", report_html},
    {"/report.json", kRead, true, "the same report as JSON", report_json},
};

std::string methods_text(uint8_t methods) {
  std::string out;
  if ((methods & kRead) != 0) out = "GET, HEAD";
  if ((methods & kPost) != 0) out += out.empty() ? "POST" : ", POST";
  return out;
}

bool allows(uint8_t methods, std::string_view method) {
  if (method == "GET" || method == "HEAD") return (methods & kRead) != 0;
  return method == "POST" && (methods & kPost) != 0;
}

}  // namespace

std::span<const AdminEndpoint> admin_endpoints() {
  static const std::vector<AdminEndpoint> all = [] {
    std::vector<AdminEndpoint> rows(std::begin(kProxyEndpoints), std::end(kProxyEndpoints));
    for (const AdminEndpoint& row : recording_admin_endpoints()) rows.push_back(row);
    return rows;
  }();
  return all;
}

std::string admin_endpoints_help() {
  std::string out;
  for (const AdminEndpoint& e : admin_endpoints()) {
    std::string line = "    " + std::string((e.methods & kPost) != 0 ? "POST" : "GET ") + " ";
    line += e.path;
    line.resize(std::max<size_t>(line.size() + 1, 30), ' ');
    out += line + std::string(e.help) + "\n";
  }
  return out;
}

awaitable<HttpResponse> route_admin(const AdminHttpRequest& request, ProxyRuntime& rt) {
  const std::string_view target(request.target);
  const std::string_view path = target.substr(0, target.find('?'));
  const AdminEndpoint* endpoint = nullptr;
  for (const AdminEndpoint& e : admin_endpoints()) {
    if (e.path == path) endpoint = &e;
  }
  // First of all, on every path, so a page of a rebound name learns nothing, not even the list
  // of paths or whether the upstream is up.
  if (auto refused = refuse_foreign_host(request.host, rt.config)) co_return *refused;
  // Every endpoint but the probes: a page of another site may not even read (a GET from a
  // foreign Origin is refused too, not only a POST).
  if (endpoint == nullptr || !endpoint->probe) {
    if (auto refused = refuse_foreign_origin(request)) co_return *refused;
  }
  // An unknown path needs the token too, so the 404's list is not told to strangers.
  if ((endpoint == nullptr || endpoint->needs_token) && !rt.admin_token.empty() &&
      !bearer_token_matches(request.authorization, rt.admin_token)) {
    co_return HttpResponse{401, "text/plain; charset=utf-8", "missing or wrong bearer token\n"};
  }
  if (endpoint == nullptr) {
    std::string paths;
    for (const AdminEndpoint& e : admin_endpoints()) {
      paths += (paths.empty() ? "" : ", ") + std::string(e.path);
    }
    co_return HttpResponse{404, "text/plain", "not found: try " + paths + "\n"};
  }
  if (!allows(endpoint->methods, request.method)) {
    const std::string allowed = methods_text(endpoint->methods);
    co_return HttpResponse{405, "text/plain", allowed + " only\n", allowed};
  }
  if (request.method == "POST") {
    if (auto refused = refuse_cross_site_post(request)) co_return *refused;
  }
  co_return co_await endpoint->handler(AdminRequest{request.method, path, request.body}, rt);
}

}  // namespace docguard::proxy
