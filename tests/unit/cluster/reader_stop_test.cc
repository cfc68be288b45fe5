// A reader whose server never answers: the stop flag ends its wait for one (docguard stopping
// joins the thread that reads), and without it the read fails as libmongoc's selection would.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "docguard/cluster/cluster_reader.h"

namespace docguard::cluster {
namespace {

// A loopback port nothing listens on: bound, then closed.
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

TEST(ClusterReaderStop, TheStopFlagEndsTheWaitForAServerThatNeverAnswers) {
  std::atomic<bool> stop{false};
  ReaderOptions options;
  options.uri =
      "mongodb://127.0.0.1:" + std::to_string(closed_port()) + "/?serverSelectionTimeoutMS=60000";
  options.stop = &stop;
  auto reader = ClusterReader::open(options);
  ASSERT_TRUE(reader) << reader.error().message;
  std::thread stopper([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  const auto databases = (*reader)->list_databases();
  stopper.join();
  ASSERT_FALSE(databases);
  // Stopped, not a server selection that ran its course: the wait looked at the flag.
  EXPECT_EQ(databases.error().kind, ErrorKind::kStopped) << databases.error().message;
}

TEST(ClusterReaderStop, WithoutAStopAServerThatNeverAnswersIsAConnectFailure) {
  ReaderOptions options;
  options.uri =
      "mongodb://127.0.0.1:" + std::to_string(closed_port()) + "/?serverSelectionTimeoutMS=400";
  auto reader = ClusterReader::open(options);
  ASSERT_TRUE(reader) << reader.error().message;
  const auto databases = (*reader)->list_databases();
  ASSERT_FALSE(databases);
  EXPECT_EQ(databases.error().kind, ErrorKind::kConnect) << databases.error().message;
}

}  // namespace
}  // namespace docguard::cluster
