// The admin listener on Boost.Beast: one request per connection, read within a deadline and
// bounded in size, answered through the endpoint table (admin_endpoints.cc).
#include "docguard/proxy/admin_server.h"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include "docguard/proxy/coroutines.h"

namespace docguard::proxy {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;

// A request's head and body together; POST /recording/start's settings are the largest body.
constexpr size_t kMaxRequestBytes = 8192;
constexpr auto kReadDeadline = std::chrono::seconds(5);
// Writing the answer: a /report of many collections to a slow reader, within a bound.
constexpr auto kWriteDeadline = std::chrono::seconds(30);

awaitable<void> serve_one(tcp::socket socket, ProxyRuntime& rt) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer(kMaxRequestBytes);
  http::request_parser<http::string_body> parser;
  parser.header_limit(kMaxRequestBytes);
  parser.body_limit(kMaxRequestBytes / 2);
  stream.expires_after(kReadDeadline);
  auto [read_error, read_bytes] = co_await http::async_read(stream, buffer, parser, kUseTuple);
  (void)read_bytes;
  stream.expires_never();
  HttpResponse response;
  bool head = false;
  if (read_error == http::error::body_limit) {
    response = {400, "text/plain; charset=utf-8", "request body too large\n"};
  } else if (read_error) {
    response = {400, "text/plain; charset=utf-8", "bad request\n"};
  } else {
    const auto& request = parser.get();
    head = request.method() == http::verb::head;
    AdminHttpRequest routed;
    routed.method = std::string(request.method_string());
    routed.target = std::string(request.target());
    routed.authorization = std::string(request[http::field::authorization]);
    routed.host = std::string(request[http::field::host]);
    if (const auto origin = request.find(http::field::origin); origin != request.end()) {
      routed.origin = std::string(origin->value());
    }
    routed.content_type = std::string(request[http::field::content_type]);
    routed.body = request.body();
    response = co_await route_admin(routed, rt);
  }
  http::response<http::string_body> answer{static_cast<http::status>(response.status), 11};
  answer.set(http::field::content_type, response.content_type);
  if (!response.allow.empty()) answer.set(http::field::allow, response.allow);
  answer.keep_alive(false);
  answer.content_length(response.body.size());
  if (!head) answer.body() = std::move(response.body);
  stream.expires_after(kWriteDeadline);
  (void)co_await http::async_write(stream, answer, kUseTuple);
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
}

}  // namespace

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
