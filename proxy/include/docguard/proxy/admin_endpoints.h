// The admin API as one table: each endpoint's path, the methods it answers, whether it needs the
// admin token, one line of help, and its handler. The router, the 404 text and `docguard --help`
// are all made from the table, so adding an endpoint is a row and a handler.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "docguard/proxy/runtime.h"

namespace docguard::proxy {

struct HttpResponse {
  HttpResponse() = default;
  HttpResponse(int status, std::string content_type, std::string body, std::string allow = {})
      : status(status),
        content_type(std::move(content_type)),
        body(std::move(body)),
        allow(std::move(allow)) {}

  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::string allow;  // the Allow header of a 405
};

// One request as the listener read it: what the router and its checks need of it.
struct AdminHttpRequest {
  std::string method;  // "GET", "HEAD", "POST", ...
  std::string target;  // the path and its query
  std::string authorization;
  std::string host;                   // the Host header; empty when absent
  std::optional<std::string> origin;  // the Origin header, when sent (browsers send it on POST)
  std::string content_type;           // empty when absent
  std::string body;
};

struct AdminRequest {
  std::string_view method;  // "GET", "HEAD", "POST", ...
  std::string_view path;    // the target without its query
  std::string_view body;
};

// Which methods an endpoint answers: kRead is GET and HEAD.
enum AdminMethods : uint8_t { kRead = 1, kPost = 2 };

using AdminHandler = boost::asio::awaitable<HttpResponse> (*)(const AdminRequest&, ProxyRuntime&);

struct AdminEndpoint {
  std::string_view path;
  uint8_t methods = kRead;
  bool needs_token = true;  // when an admin token is set
  std::string_view help;
  AdminHandler handler = nullptr;
  // A probe (/healthz, /readyz): answers whatever Origin the request names, as it needs no
  // token; it changes nothing and tells little. Its Host is checked as every endpoint's is (a
  // kubelet probes by the pod's address, the image's HEALTHCHECK sends no Host).
  bool probe = false;
};

// Every endpoint, the proxy's own and the recorder's (recording_endpoints.cc), in help order.
std::span<const AdminEndpoint> admin_endpoints();
// The recorder's rows of the table.
std::span<const AdminEndpoint> recording_admin_endpoints();

// One line per endpoint ("  GET  /metrics   Prometheus metrics"), for `docguard --help`.
std::string admin_endpoints_help();

// Routes one request through the table: 421 for a Host that does not name this listener
// (admin_request_guard.h), 403 for another site's Origin (the probes excepted), 401 without the
// token where one is needed, 404 naming the paths, 405
// naming the methods, 403 or 415 for a POST a browser could send from another site.
boost::asio::awaitable<HttpResponse> route_admin(const AdminHttpRequest& request,
                                                 ProxyRuntime& runtime);

}  // namespace docguard::proxy
