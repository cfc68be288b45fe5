// Errors from opening a listener, in words a user can act on: what docguard was doing, with
// which address, what went wrong and, where it is knowable, what to do. Asio's own text carries
// the source location of the failing call, which helps a developer and no one else: it goes to
// the debug log only.
#pragma once

#include <boost/system/error_code.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "docguard/base/error.h"

namespace docguard::proxy {

class ListenError : public std::runtime_error {
 public:
  ListenError(std::string address, const std::string& text)
      : std::runtime_error(text), address_(std::move(address)) {}
  // The operator's to fix (another address, a stopped process, a path): kind and source
  // kConfiguration, the address as its subject, what() as the message.
  base::Error error() const {
    return base::Error{base::ErrorKind::kConfiguration, base::ErrorSource::kConfiguration, what(),
                       address_};
  }

 private:
  std::string address_;
};

// "cannot listen on 127.0.0.1:27018: bind: address already in use; another process ...".
// `step` names the failing call (resolve, bind, listen, ...); `unix_socket` picks the hints that
// apply to a socket file.
[[noreturn]] void throw_listen_error(const std::string& address, std::string_view step,
                                     const boost::system::error_code& ec, bool unix_socket = false);

// What to do about `ec` when opening a listener, or "" when there is nothing useful to say.
std::string listen_error_hint(const boost::system::error_code& ec, bool unix_socket);

}  // namespace docguard::proxy
