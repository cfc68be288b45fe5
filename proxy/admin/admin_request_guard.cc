// The admin API's checks of where a request comes from (admin_request_guard.h).
#include "docguard/proxy/admin_request_guard.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "docguard/base/constant_time.h"
#include "docguard/base/ip_address.h"

namespace docguard::proxy {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The name of "name", "name:port", "[v6]" or "[v6]:port", lower case, without a final dot.
std::string host_name_of(std::string_view host) {
  if (host.starts_with('[')) return lower(host.substr(0, host.find(']') + 1));
  // Two colons or more: an IPv6 address without brackets, taken whole.
  if (std::count(host.begin(), host.end(), ':') == 1) host = host.substr(0, host.find(':'));
  std::string name = lower(host);
  if (name.ends_with('.')) name.pop_back();
  return name;
}

HttpResponse refusal(int status, std::string text) {
  return {status, "text/plain; charset=utf-8", std::move(text) + "\n"};
}

}  // namespace

std::optional<HttpResponse> refuse_foreign_host(std::string_view host, const ProxyConfig& config) {
  // Without a Host header the client is no browser (browsers always send one).
  if (host.empty()) return std::nullopt;
  const std::string name = host_name_of(host);
  // An IP literal is what probes and scrapers send (a pod's address); a page reaches this
  // listener by an address only under that address's own origin, never through a rebound name.
  if (base::parse_ip_address(name)) return std::nullopt;
  if (name == "localhost" || name == lower(config.admin.host)) return std::nullopt;
  for (const std::string& allowed : config.admin_allowed_hosts) {
    if (name == host_name_of(allowed)) return std::nullopt;
  }
  return refusal(421,
                 "the Host header names '" + name +
                     "', not this admin listener: use its address or localhost, or add the name "
                     "to admin.allowed_hosts");
}

std::optional<HttpResponse> refuse_foreign_origin(const AdminHttpRequest& request) {
  if (!request.origin) return std::nullopt;
  const std::string origin = lower(*request.origin);
  const std::string host = lower(request.host);
  if (!host.empty() && (origin == "http://" + host || origin == "https://" + host)) {
    return std::nullopt;
  }
  return refusal(403, "a request from another origin (" + *request.origin +
                          ") may not use the admin listener");
}

std::optional<HttpResponse> refuse_cross_site_post(const AdminHttpRequest& request) {
  if (auto refused = refuse_foreign_origin(request)) return refused;
  const std::string_view type =
      std::string_view(request.content_type).substr(0, request.content_type.find(';'));
  const auto first = type.find_first_not_of(" \t");
  const auto last = type.find_last_not_of(" \t");
  const std::string media =
      first == std::string_view::npos ? "" : lower(type.substr(first, last - first + 1));
  if (media == "application/json") return std::nullopt;
  if (media.empty() && request.body.empty()) return std::nullopt;
  return refusal(415,
                 "a POST to the admin API takes Content-Type: application/json (or no body "
                 "and no Content-Type)");
}

bool bearer_token_matches(std::string_view authorization, std::string_view token) {
  constexpr std::string_view kScheme = "bearer";
  const bool scheme =
      authorization.size() > kScheme.size() &&
      lower(authorization.substr(0, kScheme.size())) == kScheme &&
      (authorization[kScheme.size()] == ' ' || authorization[kScheme.size()] == '\t');
  if (!scheme) return false;
  std::string_view credentials = authorization.substr(kScheme.size());
  const auto first = credentials.find_first_not_of(" \t");
  const auto last = credentials.find_last_not_of(" \t");
  credentials = first == std::string_view::npos ? std::string_view()
                                                : credentials.substr(first, last - first + 1);
  return base::equal_in_constant_time(credentials, token);
}

}  // namespace docguard::proxy
