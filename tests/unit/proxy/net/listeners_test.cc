// The Unix socket listener's file: its mode, a live socket left alone, a stale one replaced,
// and removal at shutdown (only of the file docguard made); descriptors accepted on it.
#include "docguard/proxy/listeners.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "docguard/proxy/listen_errors.h"

namespace docguard::proxy {
namespace {

namespace asio = boost::asio;

struct UnixListenerTest : ::testing::Test {
  void SetUp() override {
    char name[] = "/tmp/docguard-listen-XXXXXX";
    ASSERT_NE(mkdtemp(name), nullptr);
    dir = name;
    path = dir + "/docguard.sock";
    config.listen.clear();
    UnixSocketSettings socket;
    socket.path = path;
    socket.mode = 0640;
    config.listen_unix.push_back(socket);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  // A connected client descriptor, or -1.
  int connect_client() const {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path.data(), path.size());
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
      ::close(fd);
      return -1;
    }
    return fd;
  }
  bool exists() const { return std::filesystem::exists(std::filesystem::symlink_status(path)); }
  mode_t mode() const {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    return st.st_mode & 07777;
  }

  std::string dir, path;
  ProxyConfig config;
  asio::io_context ioc;
};

TEST_F(UnixListenerTest, AppliesTheModeAcceptsAndRemovesTheFile) {
  const mode_t previous = ::umask(0);  // the mode must not depend on the umask
  ClientListeners listeners(ioc, config);
  ::umask(previous);
  EXPECT_EQ(mode(), 0640u);
  EXPECT_EQ(listeners.describe(), "unix:" + path + " (mode 0640)");

  std::vector<AcceptedClient> accepted;
  listeners.start([&](AcceptedClient client) { accepted.push_back(client); });
  const int client = connect_client();
  ASSERT_GE(client, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (accepted.empty() && std::chrono::steady_clock::now() < deadline) {
    ioc.run_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(accepted.size(), 1u);
  EXPECT_EQ(accepted[0].unix_socket, 0u);
  EXPECT_EQ(unix_peer_name(accepted[0].fd, path), "unix:" + path +
                                                      "(pid=" + std::to_string(::getpid()) +
                                                      ",uid=" + std::to_string(::getuid()) + ")");
  ::close(accepted[0].fd);
  ::close(client);

  listeners.close();
  EXPECT_FALSE(exists());
  EXPECT_EQ(connect_client(), -1);
}

TEST_F(UnixListenerTest, RefusesToStartOverALiveSocket) {
  ClientListeners first(ioc, config);
  try {
    ClientListeners second(ioc, config);
    FAIL() << "a second listener took over a live socket";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("another process listens"), std::string::npos) << e.what();
  }
  // The first one's file is untouched, and still accepts.
  EXPECT_TRUE(exists());
  const int client = connect_client();
  EXPECT_GE(client, 0);
  ::close(client);
}

TEST_F(UnixListenerTest, ReplacesAStaleSocket) {
  {
    // A socket file nothing accepts on any more, as a killed process leaves it.
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path.data(), path.size());
    ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
    ::close(fd);
  }
  ASSERT_TRUE(exists());
  ClientListeners listeners(ioc, config);
  EXPECT_EQ(mode(), 0640u);
  const int client = connect_client();
  EXPECT_GE(client, 0);
  ::close(client);
}

TEST_F(UnixListenerTest, LeavesAPathThatIsNotASocket) {
  std::ofstream(path) << "not a socket";
  EXPECT_THROW(ClientListeners(ioc, config), std::runtime_error);
  EXPECT_TRUE(std::filesystem::is_regular_file(path));
}

TEST_F(UnixListenerTest, RemovesOnlyTheFileItMade) {
  ClientListeners listeners(ioc, config);
  // Another process replaced the file meanwhile (a new docguard started over a stale one).
  std::filesystem::remove(path);
  std::ofstream(path) << "someone else's";
  listeners.close();
  EXPECT_TRUE(std::filesystem::is_regular_file(path));
}

TEST_F(UnixListenerTest, OwnerAndGroupAreApplied) {
  config.listen_unix[0].uid = ::getuid();  // changing to one's own ids needs no privilege
  config.listen_unix[0].gid = ::getgid();
  config.listen_unix[0].mode = 0600;
  ClientListeners listeners(ioc, config);
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::getuid());
  EXPECT_EQ(st.st_gid, ::getgid());
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(UnixListenerTest, TcpAndUnixTogether) {
  config.listen.push_back(HostPort{"127.0.0.1", 0});
  ClientListeners listeners(ioc, config);
  EXPECT_EQ(listeners.describe(), "127.0.0.1:0, unix:" + path + " (mode 0640)");
  EXPECT_TRUE(exists());
}

// A listener that cannot start says what docguard was doing, with which address, what went wrong
// in words, and what to do; never Asio's source location.
void expect_actionable(const std::string& text, const std::string& address,
                       const std::string& advice) {
  EXPECT_NE(text.find("cannot listen on " + address + ": "), std::string::npos) << text;
  EXPECT_NE(text.find(advice), std::string::npos) << text;
  EXPECT_EQ(text.find(".hpp"), std::string::npos) << text;
  EXPECT_EQ(text.find("asio"), std::string::npos) << text;
}

std::string listen_failure(ProxyConfig config, asio::io_context& ioc) {
  try {
    ClientListeners listeners(ioc, config);
  } catch (const ListenError& e) {
    // The same words as the base error the configuration check reports.
    EXPECT_EQ(e.error().kind, base::ErrorKind::kConfiguration);
    EXPECT_EQ(e.error().message, e.what());
    EXPECT_FALSE(e.error().subject.empty());
    return e.what();
  }
  return "no error";
}

TEST_F(UnixListenerTest, AnAddressInUseIsExplained) {
  asio::ip::tcp::acceptor taken(ioc);
  open_tcp_listener(taken, HostPort{"127.0.0.1", 0});
  const uint16_t port = taken.local_endpoint().port();
  config.listen_unix.clear();
  config.listen.push_back(HostPort{"127.0.0.1", port});
  expect_actionable(listen_failure(config, ioc), "127.0.0.1:" + std::to_string(port),
                    "bind: Address already in use; another process");
}

TEST_F(UnixListenerTest, AHostThatDoesNotResolveIsExplained) {
  config.listen_unix.clear();
  config.listen.push_back(HostPort{"no-such-host.invalid", 27018});
  expect_actionable(listen_failure(config, ioc), "no-such-host.invalid:27018",
                    "the host name does not resolve here");
}

TEST_F(UnixListenerTest, AnAddressOfAnotherMachineIsExplained) {
  config.listen_unix.clear();
  config.listen.push_back(HostPort{"192.0.2.1", 27018});  // TEST-NET-1: never local
  expect_actionable(listen_failure(config, ioc), "192.0.2.1:27018",
                    "this machine has no such address");
}

TEST_F(UnixListenerTest, AMissingSocketFolderIsExplained) {
  config.listen_unix.front().path = dir + "/missing/docguard.sock";
  expect_actionable(listen_failure(config, ioc), "unix:" + dir + "/missing/docguard.sock",
                    "the socket's folder does not exist");
}

}  // namespace
}  // namespace docguard::proxy
