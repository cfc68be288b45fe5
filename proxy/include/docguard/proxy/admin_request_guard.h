// What keeps a web browser on the admin listener's host from driving the admin API for a page of
// another site (docs/configuration.md, "The admin listener and browsers"):
// - the Host header must name this listener: an IP literal (a rebound name is never one),
//   `localhost`, the host of `admin.listen`, or a name of `admin.allowed_hosts`; any other name
//   is a page whose name was rebound to this address (421);
// - a request with an Origin header, GET included, must come from the listener's own origin
//   (403), the probes (/healthz, /readyz) excepted: browsers send Origin with every POST and
//   with a page's fetch() of another origin, other clients (curl, scripts, scrapers) send none;
// - a POST's body must be `application/json` (415): a form or a `text/plain` body is what a page
//   can send to another site without asking first. A POST with no body and no Content-Type
//   passes (curl -X POST); a page sending one still sends its Origin.
#pragma once

#include <optional>
#include <string_view>

#include "docguard/proxy/admin_endpoints.h"
#include "docguard/proxy/config.h"

namespace docguard::proxy {

// nullopt when `host` (a Host header's value, "" when absent) names this listener.
std::optional<HttpResponse> refuse_foreign_host(std::string_view host, const ProxyConfig& config);

// nullopt when the request's Origin, if it has one, is the listener's own (the Host it names).
std::optional<HttpResponse> refuse_foreign_origin(const AdminHttpRequest& request);

// nullopt when a POST may go on: its Origin, if any, is the listener's own, and its body JSON.
std::optional<HttpResponse> refuse_cross_site_post(const AdminHttpRequest& request);

// True when `authorization` (the header's value) is "Bearer <token>": the scheme in any case
// (auth schemes are case-insensitive, RFC 9110 section 11.1), the token compared in constant
// time, so how long a wrong token takes does not say how much of it was right.
bool bearer_token_matches(std::string_view authorization, std::string_view token);

}  // namespace docguard::proxy
