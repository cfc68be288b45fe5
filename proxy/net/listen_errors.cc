#include "docguard/proxy/listen_errors.h"

#include <spdlog/spdlog.h>

#include <boost/asio/error.hpp>
#include <cerrno>

namespace docguard::proxy {

namespace asio = boost::asio;

std::string listen_error_hint(const boost::system::error_code& ec, bool unix_socket) {
  if (ec == asio::error::address_in_use) {
    return "another process (perhaps another docguard) listens there: stop it or choose another "
           "address";
  }
  if (ec == boost::system::errc::address_not_available) {
    return "this machine has no such address: use one of its addresses, or 0.0.0.0 for all of "
           "them";
  }
  if (ec == asio::error::host_not_found || ec == asio::error::host_not_found_try_again ||
      ec == asio::error::no_data) {
    return "the host name does not resolve here: use an IP address or a name this machine "
           "resolves";
  }
  if (ec == asio::error::access_denied) {
    return unix_socket ? "docguard's user may not create files in that folder: choose a folder "
                         "it can write to, or run it as a user that can"
                       : "ports below 1024 need root or CAP_NET_BIND_SERVICE: choose a port "
                         "above 1023";
  }
  if (unix_socket && ec == boost::system::errc::no_such_file_or_directory) {
    return "the socket's folder does not exist: create it first (in Kubernetes, mount a shared "
           "emptyDir volume there)";
  }
  if (unix_socket && ec == boost::system::errc::filename_too_long) {
    return "a socket path has at most 107 bytes: choose a shorter path";
  }
  return "";
}

void throw_listen_error(const std::string& address, std::string_view step,
                        const boost::system::error_code& ec, bool unix_socket) {
  spdlog::debug("listener {}: {} failed at {}", address, step, ec.location().to_string());
  std::string text = "cannot listen on " + address + ": " + std::string(step) + ": " + ec.message();
  const std::string hint = listen_error_hint(ec, unix_socket);
  if (!hint.empty()) text += "; " + hint;
  throw ListenError(address, text);
}

}  // namespace docguard::proxy
