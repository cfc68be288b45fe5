// The proxy's settings, as the proxy's code names them: the settings layer declares and reads
// them (docguard/settings/proxy_settings.h); this header only brings the names into the proxy's
// namespace.
#pragma once

#include "docguard/settings/config_error.h"
#include "docguard/settings/proxy_settings.h"

namespace docguard::proxy {

using conversation::Persona;
using settings::ClientTlsSettings;
using settings::ConfigError;
using settings::HostPort;
using settings::kLogFormatNames;
using settings::kLogLevelNames;
using settings::LogFormat;
using settings::LogLevel;
using settings::ProxyConfig;
using settings::UnixSocketSettings;
using settings::UpstreamTlsSettings;

using settings::add_listen_address;
using settings::check_unix_socket_path;
using settings::check_upstream_uri;
using settings::effective_upstream_tls;
using settings::libmongoc_upstream_uri;
using settings::parse_host_port;
using settings::parse_socket_mode;
using settings::parse_upstream_uri;
using settings::resolve_group;
using settings::resolve_user;
using settings::set_upstream;
using settings::upstream_first_seed;

}  // namespace docguard::proxy
