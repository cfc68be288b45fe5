// Where clients connect: the TCP listeners and the Unix domain socket listeners, each accepting
// bare descriptors for the server to hand to an io thread.
#pragma once

#include <sys/stat.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "docguard/proxy/config.h"

namespace docguard::proxy {

// One accepted descriptor, on its way to its session.
struct AcceptedClient {
  int fd = -1;
  // The TCP listener's family, which the session's socket is given. A Unix socket's descriptor
  // goes into a tcp::socket too (see server.cc), with this left at v4.
  boost::asio::ip::tcp protocol = boost::asio::ip::tcp::v4();
  std::optional<size_t> unix_socket;  // index into ProxyConfig::listen_unix; unset: TCP
};

// Resolves `address` and listens on it (SO_REUSEADDR); throws ListenError naming the address,
// the failing step and what to do.
void open_tcp_listener(boost::asio::ip::tcp::acceptor& acceptor, const HostPort& address);

// A Unix socket's file: created owner-only, then given its mode, owner and group; removed when
// docguard stops, unless another process has replaced it since.
class UnixSocketFile {
 public:
  // Clears a stale file (nothing accepts on it) from a previous run, binds `acceptor` and
  // applies the settings. Throws ListenError naming the path when another process
  // listens there, the path is not a socket, or a step fails.
  UnixSocketFile(boost::asio::local::stream_protocol::acceptor& acceptor,
                 const UnixSocketSettings& settings);
  ~UnixSocketFile() { remove(); }
  UnixSocketFile(const UnixSocketFile&) = delete;
  UnixSocketFile& operator=(const UnixSocketFile&) = delete;
  void remove();

 private:
  std::string path_;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  bool removed_ = false;
};

class ClientListeners {
 public:
  // Opens every listen address of `config` on `ioc` (TCP first, then the sockets in order);
  // throws ListenError naming the address that failed. Call before any other thread
  // starts: binding a socket narrows the process's umask for a moment.
  ClientListeners(boost::asio::io_context& ioc, const ProxyConfig& config);
  ~ClientListeners();
  ClientListeners(const ClientListeners&) = delete;
  ClientListeners& operator=(const ClientListeners&) = delete;

  // One accept loop per listener on `ioc`; `accepted` runs on its thread for every descriptor
  // and owns it from then on.
  void start(const std::function<void(AcceptedClient)>& accepted);
  // Stops accepting and removes the socket files.
  void close();
  // "127.0.0.1:27018, unix:/run/docguard/docguard.sock", for the startup line.
  std::string describe() const;

 private:
  struct UnixListener {
    explicit UnixListener(boost::asio::io_context& ioc) : acceptor(ioc) {}
    boost::asio::local::stream_protocol::acceptor acceptor;
    std::optional<UnixSocketFile> file;
  };
  std::vector<std::unique_ptr<boost::asio::ip::tcp::acceptor>> tcp_;
  std::vector<std::unique_ptr<UnixListener>> unix_;
  std::string description_;
};

// A Unix socket client's name in logs: "unix:PATH(pid=P,uid=U)" from the peer's credentials
// (SO_PEERCRED; pid is left out when the peer's process is in another pid namespace, as in
// another container of a pod), or "unix:PATH" when the kernel does not say.
std::string unix_peer_name(int fd, const std::string& path);

}  // namespace docguard::proxy
