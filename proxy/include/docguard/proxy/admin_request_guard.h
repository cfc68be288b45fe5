// What keeps a web browser on the admin listener's host from driving the admin API for a page of
// another site (docs/configuration.md, "The admin listener and browsers"):
// - the Host header must name this listener: an IP literal (a rebound name is never one),
//   `localhost`, the host of `admin.listen`, or a name of `admin.allowed_hosts`; any other name
//   is a page whose name was rebound to this address (421);
// - a POST with an Origin header must come from the listener's own origin (403): browsers send
//   Origin with every POST, other clients (curl, scripts) send none;
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

// nullopt when a POST may go on: its Origin, if any, is the listener's own, and its body JSON.
std::optional<HttpResponse> refuse_cross_site_post(const AdminHttpRequest& request);

}  // namespace docguard::proxy
