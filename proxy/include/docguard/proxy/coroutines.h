// The coroutine vocabulary of docguard's Asio code, written once.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace docguard::proxy {

// The names the proxy's coroutines are written in, the same in every file that awaits.
namespace asio = boost::asio;
using asio::awaitable;
using asio::ip::tcp;

// Awaited with this, an operation yields (error_code, results...) instead of throwing: a closed
// socket or a cancelled timer is an everyday outcome on the data path, not an exception.
inline constexpr auto kUseTuple = boost::asio::as_tuple(boost::asio::use_awaitable);

}  // namespace docguard::proxy
