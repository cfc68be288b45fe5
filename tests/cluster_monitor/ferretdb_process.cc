#include "ferretdb_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

extern char** environ;

namespace docguard::cluster::testing {
namespace {

sockaddr_in loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// A port below the kernel's ephemeral range (32768 and up by default): one the kernel picked
// for a bind to 0 may go to the next outgoing connection before FerretDB listens on it.
int free_port() {
  static std::mt19937 pick{std::random_device{}()};
  std::uniform_int_distribution<int> range(10000, 32000);
  for (int attempt = 0; attempt < 200; ++attempt) {
    const int port = range(pick);
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    const sockaddr_in a = loopback(port);
    const bool bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    if (bound) return port;
  }
  return 0;
}

bool accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const sockaddr_in a = loopback(port);
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

std::string find_ferretdb() {
  std::vector<std::string> candidates;
  if (const char* b = std::getenv("FERRETDB_BIN")) candidates.emplace_back(b);
  if (const char* t = std::getenv("DOCGUARD_TOOLS"))
    candidates.push_back(std::string(t) + "/bin/ferretdb");
  candidates.emplace_back(DOCGUARD_DEFAULT_FERRETDB);
  for (const auto& c : candidates) {
    if (::access(c.c_str(), X_OK) == 0) return c;
  }
  return {};
}

FerretDb::FerretDb(std::string binary) : binary_(std::move(binary)), port_(free_port()) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "docguard-cluster-XXXXXX").string();
  dir_ = ::mkdtemp(tmpl.data());
}

FerretDb::~FerretDb() {
  kill();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

bool FerretDb::start() {
  std::vector<std::string> args = {binary_,
                                   "--handler=sqlite",
                                   "--sqlite-url=file:" + dir_ + "/",
                                   "--listen-addr=" + address(),
                                   "--state-dir=" + dir_,
                                   "--debug-addr=127.0.0.1:0",
                                   "--telemetry=disable",
                                   "--log-level=error"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  const std::string log = dir_ + "/ferretdb.log";
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  const int rc = posix_spawn(&pid_, binary_.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    pid_ = -1;
    return false;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (accepts(port_)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

void FerretDb::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace docguard::cluster::testing
