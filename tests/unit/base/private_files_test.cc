// Files where another user may have planted something: a link is replaced, never written
// through; a FIFO is refused at once, never waited on.
#include "docguard/base/private_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace docguard::base {
namespace {

namespace fs = std::filesystem;

class PrivateFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("docguard-private-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string text_of(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream out;
    out << in.rdbuf();
    return out.str();
  }
  fs::path dir_;
};

TEST_F(PrivateFilesTest, ReplaceFileReplacesAPlantedLinkInsteadOfWritingThroughIt) {
  const fs::path target = dir_ / "victim";
  std::ofstream(target) << "keep";
  fs::create_symlink(target, dir_ / "report.json");
  ASSERT_TRUE(replace_file(dir_ / "report.json", "{}\n"));
  EXPECT_EQ(text_of(target), "keep");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(dir_ / "report.json")));
  EXPECT_EQ(text_of(dir_ / "report.json"), "{}\n");
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "report.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // Again over the regular file it left; nothing else remains in the directory.
  ASSERT_TRUE(replace_file(dir_ / "report.json", "[]\n"));
  EXPECT_EQ(text_of(dir_ / "report.json"), "[]\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 2);
}

TEST_F(PrivateFilesTest, ReplaceFileNamesThePathItCannotWrite) {
  const auto written = replace_file(dir_ / "missing" / "report.json", "x");
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().kind, ErrorKind::kIo);
  EXPECT_NE(written.error().message.find("report.json"), std::string::npos);
}

TEST_F(PrivateFilesTest, OpenRegularFileRefusesFifosAndLinksAtOnce) {
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  fs::create_symlink("/etc/hostname", dir_ / "link");
  std::ofstream(dir_ / "plain") << "data";
  const auto started = std::chrono::steady_clock::now();
  const auto fifo = open_regular_file(dir_ / "fifo");
  ASSERT_FALSE(fifo);
  EXPECT_NE(fifo.error().message.find("a FIFO, not a regular file"), std::string::npos);
  const auto link = open_regular_file(dir_ / "link");
  ASSERT_FALSE(link);
  EXPECT_NE(link.error().message.find("symbolic link"), std::string::npos);
  EXPECT_FALSE(open_regular_file(dir_));  // a directory
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  const auto missing = open_regular_file(dir_ / "none");
  ASSERT_TRUE(missing);
  EXPECT_EQ(*missing, nullptr);
  const auto plain = open_regular_file(dir_ / "plain");
  ASSERT_TRUE(plain);
  ASSERT_NE(*plain, nullptr);
  char buffer[8] = {};
  EXPECT_EQ(std::fread(buffer, 1, sizeof buffer, *plain), 4u);
  std::fclose(*plain);
}

}  // namespace
}  // namespace docguard::base
