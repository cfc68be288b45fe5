#include "docguard/proxy/listeners.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "docguard/proxy/coroutines.h"
#include "docguard/proxy/listen_errors.h"

namespace docguard::proxy {

using asio::local::stream_protocol;

namespace {

std::string errno_text(int err) { return std::system_category().message(err); }

boost::system::error_code errno_code(int err) { return {err, boost::system::system_category()}; }

// Refuses to take the path over from a process that accepts on it; removes a socket file that
// nothing accepts on (left by a run that did not stop cleanly).
void clear_stale_socket(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    throw_listen_error("unix:" + path, "lstat", errno_code(errno), true);
  }
  if (!S_ISSOCK(st.st_mode)) {
    throw ListenError(
        "unix:" + path,
        "cannot listen on unix:" + path +
            ": the path exists and is not a socket; remove it or choose another path");
  }
  const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (probe < 0) throw_listen_error("unix:" + path, "socket", errno_code(errno), true);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.data(), path.size());
  const int rc = ::connect(probe, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  const int err = rc == 0 ? 0 : errno;
  ::close(probe);
  // EAGAIN: a listener whose backlog is full, which is live too.
  if (rc == 0 || err == EAGAIN || err == EINPROGRESS) {
    throw ListenError(
        "unix:" + path,
        "cannot listen on unix:" + path +
            ": another process listens on this socket; stop it or choose another path");
  }
  if (err != ECONNREFUSED) {
    throw_listen_error("unix:" + path, "probing whether the socket is in use", errno_code(err),
                       true);
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    throw_listen_error("unix:" + path, "removing the stale socket", errno_code(errno), true);
  }
  spdlog::info("removed the stale socket unix:{} (nothing accepted on it)", path);
}

awaitable<void> pause(asio::any_io_executor executor) {
  asio::steady_timer timer(executor, std::chrono::milliseconds(100));
  co_await timer.async_wait(kUseTuple);
}

// Accepts bare descriptors: a socket accepted into another thread's context would be
// registered with that context's reactor from this thread, which its unlocked per-socket state
// (BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO) does not allow.
template <typename Acceptor>
awaitable<void> accept_loop(Acceptor& acceptor, AcceptedClient prototype,
                            std::function<void(AcceptedClient)> accepted) {
  acceptor.non_blocking(true);
  while (acceptor.is_open()) {
    auto [wait_ec] = co_await acceptor.async_wait(Acceptor::wait_read, kUseTuple);
    if (wait_ec) {
      if (wait_ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
      spdlog::error("accept failed: {}", wait_ec.message());
      co_await pause(acceptor.get_executor());
      continue;
    }
    while (acceptor.is_open()) {  // everything queued, then wait again
      const int fd = ::accept4(acceptor.native_handle(), nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        const int err = errno;
        if (err == EAGAIN || err == EWOULDBLOCK) break;
        if (err == EINTR || err == ECONNABORTED || err == EPROTO) continue;
        // Out of descriptors and similar: back off instead of spinning.
        spdlog::error("accept failed: {}", errno_text(err));
        co_await pause(acceptor.get_executor());
        break;
      }
      AcceptedClient client = prototype;
      client.fd = fd;
      accepted(client);
    }
  }
}

}  // namespace

void open_tcp_listener(tcp::acceptor& acceptor, const HostPort& address) {
  const std::string name = address.to_string();
  boost::system::error_code ec;
  tcp::resolver resolver(acceptor.get_executor());
  auto results = resolver.resolve(address.host, std::to_string(address.port),
                                  tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec) throw_listen_error(name, "resolve", ec);
  const tcp::endpoint endpoint = results.begin()->endpoint();
  acceptor.open(endpoint.protocol(), ec);
  if (ec) throw_listen_error(name, "socket", ec);
  acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (ec) throw_listen_error(name, "SO_REUSEADDR", ec);
  acceptor.bind(endpoint, ec);
  if (ec) throw_listen_error(name, "bind", ec);
  acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw_listen_error(name, "listen", ec);
}

UnixSocketFile::UnixSocketFile(stream_protocol::acceptor& acceptor,
                               const UnixSocketSettings& settings)
    : path_(settings.path) {
  const std::string name = settings.to_string();
  clear_stale_socket(path_);
  boost::system::error_code ec;
  acceptor.open(stream_protocol(), ec);
  if (ec) throw_listen_error(name, "socket", ec, true);
  // bind() creates the file with the umask's permissions: owner-only until the mode below is
  // applied, so no one else can connect in between. umask is per process; the caller runs
  // before any other thread exists.
  const mode_t previous = ::umask(0177);
  acceptor.bind(stream_protocol::endpoint(path_), ec);
  ::umask(previous);
  if (ec) throw_listen_error(name, "bind", ec, true);
  struct stat st {};
  if (::lstat(path_.c_str(), &st) != 0) throw_listen_error(name, "lstat", errno_code(errno), true);
  device_ = st.st_dev;
  inode_ = st.st_ino;
  if (settings.uid || settings.gid) {
    const uid_t uid = settings.uid ? static_cast<uid_t>(*settings.uid) : static_cast<uid_t>(-1);
    const gid_t gid = settings.gid ? static_cast<gid_t>(*settings.gid) : static_cast<gid_t>(-1);
    if (::chown(path_.c_str(), uid, gid) != 0) {
      const int err = errno;
      remove();
      throw_listen_error(name, "setting the owner or group", errno_code(err), true);
    }
  }
  // After chown, which may clear set-id bits; a socket has none, but the mode is the last word.
  if (::chmod(path_.c_str(), static_cast<mode_t>(settings.mode)) != 0) {
    const int err = errno;
    remove();
    throw_listen_error(name, "setting the mode", errno_code(err), true);
  }
  acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    remove();
    throw_listen_error(name, "listen", ec, true);
  }
}

void UnixSocketFile::remove() {
  if (removed_) return;
  removed_ = true;
  // Only the file this process bound: a docguard started since may have put its own there.
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && st.st_dev == device_ && st.st_ino == inode_) {
    ::unlink(path_.c_str());
  }
}

ClientListeners::ClientListeners(asio::io_context& ioc, const ProxyConfig& config) {
  for (const auto& hp : config.listen) {
    auto acceptor = std::make_unique<tcp::acceptor>(ioc);
    open_tcp_listener(*acceptor, hp);
    tcp_.push_back(std::move(acceptor));
    description_ += (description_.empty() ? "" : ", ") + hp.to_string();
  }
  for (const auto& settings : config.listen_unix) {
    if (std::any_of(settings.path.begin(), settings.path.end(),
                    [](char c) { return c >= 'A' && c <= 'Z'; })) {
      spdlog::warn(
          "{}: the Node.js driver and mongosh lowercase a connection string's host, socket "
          "paths included: they cannot reach a path with capitals",
          settings.to_string());
    }
    auto listener = std::make_unique<UnixListener>(ioc);
    listener->file.emplace(listener->acceptor, settings);
    unix_.push_back(std::move(listener));
    char mode[16];
    std::snprintf(mode, sizeof(mode), "%04o", settings.mode);
    description_ +=
        (description_.empty() ? "" : ", ") + settings.to_string() + " (mode " + mode + ")";
  }
}

ClientListeners::~ClientListeners() { close(); }

void ClientListeners::start(const std::function<void(AcceptedClient)>& accepted) {
  for (auto& acceptor : tcp_) {
    AcceptedClient prototype;
    prototype.protocol = acceptor->local_endpoint().protocol();
    asio::co_spawn(acceptor->get_executor(), accept_loop(*acceptor, prototype, accepted),
                   asio::detached);
  }
  for (size_t i = 0; i < unix_.size(); ++i) {
    AcceptedClient prototype;
    prototype.unix_socket = i;
    asio::co_spawn(unix_[i]->acceptor.get_executor(),
                   accept_loop(unix_[i]->acceptor, prototype, accepted), asio::detached);
  }
}

void ClientListeners::close() {
  boost::system::error_code ignored;
  for (auto& acceptor : tcp_) acceptor->close(ignored);
  for (auto& listener : unix_) {
    listener->acceptor.close(ignored);
    if (listener->file) listener->file->remove();
  }
}

std::string ClientListeners::describe() const { return description_; }

std::string unix_peer_name(int fd, const std::string& path) {
  std::string name = "unix:" + path;
  ucred credentials{};
  socklen_t size = sizeof(credentials);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0 &&
      size == sizeof(credentials)) {
    name += "(";
    if (credentials.pid > 0) name += "pid=" + std::to_string(credentials.pid) + ",";
    name += "uid=" + std::to_string(credentials.uid) + ")";
  }
  return name;
}

}  // namespace docguard::proxy
