#include "docguard/proxy/admin_server.h"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <sstream>

#include "docguard/base/constant_time.h"
#include "docguard/base/json_string.h"
#include "docguard/base/structured_log.h"
#include "docguard/proxy/collection_facts_json.h"
#include "docguard/proxy/coroutines.h"
#include "docguard/proxy/recording_endpoints.h"

namespace docguard::proxy {

using namespace asio::experimental::awaitable_operators;

namespace {

constexpr size_t kMaxRequestBytes = 8192;

const char* reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 400:
      return "Bad Request";
    case 503:
      return "Service Unavailable";
  }
  return "Error";
}

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

awaitable<void> serve_one(tcp::socket socket, ProxyRuntime& rt) {
  asio::streambuf buffer(kMaxRequestBytes);
  asio::steady_timer timer(socket.get_executor(), std::chrono::seconds(5));
  auto result = co_await (asio::async_read_until(socket, buffer, "\r\n\r\n", kUseTuple) ||
                          timer.async_wait(kUseTuple));
  HttpResponse response;
  if (result.index() != 0 || std::get<0>(std::get<0>(result))) {
    response = {400, "text/plain; charset=utf-8", "bad request\n"};
  } else {
    std::istream in(&buffer);
    std::string method, target, version, line, authorization;
    size_t content_length = 0;
    in >> method >> target >> version;
    std::getline(in, line);
    while (std::getline(in, line) && line != "\r") {
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (name == "content-length") {
        content_length = std::strtoull(line.c_str() + colon + 1, nullptr, 10);
      }
      if (name == "authorization") {
        authorization = line.substr(colon + 1);
        while (!authorization.empty() && (authorization.front() == ' ')) authorization.erase(0, 1);
        while (!authorization.empty() &&
               (authorization.back() == '\r' || authorization.back() == ' ')) {
          authorization.pop_back();
        }
      }
    }
    // A body (POST /recording/start's settings): what came with the head, and the rest.
    std::string body;
    if (content_length > kMaxRequestBytes / 2) {
      response = {400, "text/plain; charset=utf-8", "request body too large\n"};
    } else {
      if (buffer.size() < content_length) {
        co_await asio::async_read(
            socket, buffer, asio::transfer_exactly(content_length - buffer.size()), kUseTuple);
      }
      body.resize(std::min(content_length, buffer.size()));
      in.read(body.data(), static_cast<std::streamsize>(body.size()));
      response = co_await route_admin(method, target, authorization, rt, body);
    }
  }
  std::ostringstream head;
  head << "HTTP/1.1 " << response.status << ' ' << reason(response.status) << "\r\n"
       << "Content-Type: " << response.content_type << "\r\n"
       << "Content-Length: " << response.body.size() << "\r\n"
       << "Connection: close\r\n\r\n";
  const std::string text = head.str() + response.body;
  co_await asio::async_write(socket, asio::buffer(text), kUseTuple);
  boost::system::error_code ec;
  socket.shutdown(tcp::socket::shutdown_both, ec);
}

// /report and /report.json: the advisor's report with the sections the engine adds (candidate
// rules' verdicts, the validators' census, the workload ledger).
std::string full_report(ProxyRuntime& rt, advisor::ReportFormat format) {
  const bool html = format == advisor::ReportFormat::kHtml;
  std::string report = rt.advisor.render(format);
  const auto verdicts = rt.engine.candidate_verdicts();
  report = html ? with_candidate_verdicts_html(std::move(report), verdicts)
                : with_candidate_verdicts_json(std::move(report), verdicts);
  const auto census = rt.engine.validator_census();
  report = html ? with_validators_html(std::move(report), census)
                : with_validators_json(std::move(report), census);
  const auto workload = rt.engine.workload_report();
  return html ? with_workload_html(std::move(report), workload)
              : with_workload_json(std::move(report), workload);
}

}  // namespace

awaitable<HttpResponse> route_admin(const std::string& method, const std::string& target,
                                    const std::string& authorization, ProxyRuntime& rt,
                                    const std::string& body) {
  const std::string path = target.substr(0, target.find('?'));
  const bool recorder_path = path.starts_with("/recording");
  if (method != "GET" && method != "HEAD" && !recorder_path) {
    co_return HttpResponse{405, "text/plain", "GET only\n"};
  }
  if (path == "/healthz") co_return HttpResponse{200, "text/plain; charset=utf-8", "ok\n"};
  // Compared in constant time: how long a wrong token takes must not say how much of it was right.
  if (!rt.config.admin_token.empty() &&
      !base::equal_in_constant_time(authorization, "Bearer " + rt.config.admin_token)) {
    co_return HttpResponse{401, "text/plain; charset=utf-8", "missing or wrong bearer token\n"};
  }
  if (recorder_path) {
    if (auto response = route_recording(method, path, body, rt)) co_return *response;
  }
  const auto topology = rt.router ? rt.router->snapshot() : nullptr;
  const bool writable = topology && topology->has_writable();
  // A plain single host keeps its old meaning (a connection succeeds) so an outage shows at
  // once; in front of a cluster, "up" means a writable server is selectable.
  const bool plain_single = rt.config.upstream.seeds.size() == 1 && !rt.config.upstream.is_srv &&
                            rt.config.upstream.replica_set.empty();
  if (path == "/metrics") {
    rt.metrics.upstream_up.Set((plain_single ? co_await upstream_reachable(rt) : writable) ? 1 : 0);
    rt.metrics.update_array_gauges(rt.engine);
    rt.metrics.update_findings(rt.advisor.findings());
    rt.limit_etas.update(rt.engine.limit_forecasts(),
                         rt.config.advisor.forecast_series_per_namespace);
    rt.introspection_metrics.update_collections(rt.advisor.collection_facts());
    co_return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", rt.metrics.serialize()};
  }
  if (path == "/readyz") {
    // Ready = a writable server is selectable (for a plain single host not yet discovered by
    // the monitor, a connection to it succeeds: what a session would do).
    const bool up = writable || (plain_single && co_await upstream_reachable(rt));
    rt.metrics.upstream_up.Set(up ? 1 : 0);
    if (up) co_return HttpResponse{200, "text/plain", "ready\n"};
    co_return HttpResponse{
        503, "text/plain",
        "no writable upstream server in " + rt.config.upstream.redacted + " (topology " +
            std::string(topology ? cluster::to_string(topology->type) : "Unknown") + ")\n"};
  }
  if (path == "/status") {
    // The engine's statistics with the upstream topology as one more member.
    std::string body = rt.engine.status_json();
    if (!body.empty() && body.front() == '{') {
      // What docguard knows of each collection from the cluster and catalog traffic, and how
      // its own reads of the cluster go.
      std::string member =
          "\"collection_facts\":" + collection_facts_json(rt.advisor) + ",\"introspection\":" +
          (rt.introspector ? rt.introspector->status_json() : std::string("{\"enabled\":false}")) +
          ",\"recording\":" + rt.recorder.status_json();
      body.insert(1, body.size() > 2 ? member + "," : member);
    }
    if (topology && !body.empty() && body.front() == '{') {
      std::string member = "\"upstream\":{\"uri\":\"";
      json::append_escaped(member, rt.config.upstream.redacted);
      member += "\",\"topology\":" + cluster::to_json(*topology) + "}";
      body.insert(1, body.size() > 2 ? member + "," : member);
    }
    co_return HttpResponse{200, "application/json", body};
  }
  if (path == "/report") {
    co_return HttpResponse{200, "text/html; charset=utf-8",
                           full_report(rt, advisor::ReportFormat::kHtml)};
  }
  if (path == "/report.json") {
    co_return HttpResponse{200, "application/json", full_report(rt, advisor::ReportFormat::kJson)};
  }
  co_return HttpResponse{
      404, "text/plain",
      "not found: try /metrics, /healthz, /readyz, /status, /report, /report.json\n"};
}

awaitable<void> serve_admin(tcp::acceptor& acceptor, ProxyRuntime& rt) {
  while (acceptor.is_open()) {
    auto [ec, socket] = co_await acceptor.async_accept(kUseTuple);
    if (ec) {
      if (ec == asio::error::operation_aborted) co_return;
      spdlog::warn("admin accept failed: {}", ec.message());
      continue;
    }
    asio::co_spawn(acceptor.get_executor(), serve_one(std::move(socket), rt), asio::detached);
  }
}

}  // namespace docguard::proxy
