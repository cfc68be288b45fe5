// The recording's files: the server's packet layout, rotation by size, the total cap, and a
// CRC-32C per file in checksum.txt that matches the bytes on disk.
#include "docguard/recording/recording_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "docguard/codec/crc32c.h"

namespace docguard::recording {
namespace {

namespace fs = std::filesystem;

class RecordingFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("docguard-recording-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A directory made by hand: the owner's only, whatever the umask.
  void make_private_directory() const {
    fs::create_directories(dir_);
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::replace);
  }

  static std::vector<uint8_t> read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  std::map<std::string, std::string> checksums() const {
    std::map<std::string, std::string> out;
    std::ifstream in(dir_ / "checksum.txt");
    std::string name, crc;
    while (in >> name >> crc) out[name] = crc;
    return out;
  }
  fs::path dir_;
};

uint64_t le(const std::vector<uint8_t>& b, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(b[at + i]) << (8 * i);
  return v;
}

TEST(RecordingPacket, LayoutIsTheServers) {
  std::vector<uint8_t> out;
  const std::vector<uint8_t> message = {20, 0, 0,    0, 1, 0, 0, 0, 0, 0,
                                        0,  0, 0xdd, 7, 0, 0, 9, 9, 9, 9};
  append_packet(out, {RecordedEvent::kResponse, 42, "127.0.0.1:5000", 1234567, 9}, message);
  const size_t session_end = 1 + 4 + 8 + 14;
  ASSERT_EQ(out.size(), 4 + 1 + 8 + 15 + 8 + 8 + message.size());
  EXPECT_EQ(le(out, 0, 4), out.size());
  EXPECT_EQ(out[4], 1);  // response
  EXPECT_EQ(le(out, 5, 8), 42u);
  EXPECT_EQ(std::string(out.begin() + 13, out.begin() + 27), "127.0.0.1:5000");
  EXPECT_EQ(out[session_end - 1 + 1], 0);
  EXPECT_EQ(le(out, 28, 8), 1234567u);
  EXPECT_EQ(le(out, 36, 8), 9u);
  EXPECT_TRUE(std::equal(message.begin(), message.end(), out.begin() + 44));
}

TEST_F(RecordingFilesTest, RotatesBySizeAndChecksumsEveryFile) {
  RecordingFiles files(dir_, /*max_file_bytes=*/300, /*max_total_bytes=*/1 << 20);
  files.open();
  const std::vector<uint8_t> message(100, 0xab);
  for (uint64_t order = 1; order <= 10; ++order) {
    ASSERT_EQ(files.write({RecordedEvent::kRequest, 1, "s", order, order}, message,
                          "{\"order\":" + std::to_string(order) + "}"),
              RecordingFiles::Written::kYes);
  }
  files.close();
  // Each packet is 4+1+8+2+8+8+100 = 131 bytes: two fit in 300, so five data files. The side
  // lines count toward the total too ({"order":N} and its newline: 12 bytes, 13 for 10).
  ASSERT_EQ(files.file_names().size(), 5u);
  EXPECT_EQ(files.packets(), 10u);
  EXPECT_EQ(files.bytes(), 1310u + 9 * 12 + 13);
  const auto sums = checksums();
  for (const auto& name : files.file_names()) {
    const auto bytes = read(dir_ / name);
    EXPECT_LE(bytes.size(), 300u);
    std::ostringstream hex;
    hex << std::hex << codec::crc32c(bytes);
    ASSERT_TRUE(sums.count(name)) << name;
    EXPECT_EQ(sums.at(name), hex.str()) << name;
    const std::string side = name.substr(0, name.size() - 4) + ".docguard.jsonl";
    ASSERT_TRUE(sums.count(side)) << side;
    EXPECT_TRUE(fs::exists(dir_ / side));
  }
  EXPECT_TRUE(std::is_sorted(files.file_names().begin(), files.file_names().end()));
}

TEST_F(RecordingFilesTest, APacketLargerThanAFileGetsAFileOfItsOwn) {
  RecordingFiles files(dir_, 50, 1 << 20);
  files.open();
  const std::vector<uint8_t> big(200, 1);
  EXPECT_EQ(files.write({RecordedEvent::kRequest, 1, "s", 0, 1}, big, ""),
            RecordingFiles::Written::kYes);
  EXPECT_EQ(files.write({RecordedEvent::kRequest, 1, "s", 0, 2}, big, ""),
            RecordingFiles::Written::kYes);
  files.close();
  EXPECT_EQ(files.file_names().size(), 2u);
}

TEST_F(RecordingFilesTest, TheTotalCapStopsWritingBeforeItIsPassed) {
  RecordingFiles files(dir_, 1 << 20, /*max_total_bytes=*/400);
  files.open();
  const std::vector<uint8_t> message(100, 2);
  int written = 0;
  for (uint64_t order = 1; order <= 5; ++order) {
    if (files.write({RecordedEvent::kRequest, 1, "s", 0, order}, message, "") ==
        RecordingFiles::Written::kCapReached) {
      break;
    }
    ++written;
  }
  files.close();
  EXPECT_EQ(written, 3);  // 3 x 131 = 393 <= 400 < 524
  EXPECT_EQ(files.bytes(), 393u);
  EXPECT_EQ(read(dir_ / files.file_names().front()).size(), 393u);
}

TEST_F(RecordingFilesTest, ADirectoryThatCannotBeMadeIsAnError) {
  std::ofstream(dir_.string() + "-file") << "x";
  RecordingFiles files(fs::path(dir_.string() + "-file") / "sub", 100, 100);
  EXPECT_THROW(files.open(), std::runtime_error);
  fs::remove(dir_.string() + "-file");
}

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST_F(RecordingFilesTest, FilesAreTheOwnersOnlyInADirectoryOfTheOwnersOnly) {
  const mode_t old_mask = ::umask(0);  // what a careless service manager might leave
  RecordingFiles files(dir_ / "nested", 1 << 20, 1 << 20);
  files.open();
  files.write({RecordedEvent::kRequest, 1, "s", 0, 1}, std::vector<uint8_t>(100, 1), "{}");
  files.close();
  ::umask(old_mask);
  EXPECT_EQ(mode_of(dir_), 0700u);
  EXPECT_EQ(mode_of(dir_ / "nested"), 0700u);
  const std::string data = files.file_names().front();
  const std::string stem = data.substr(0, data.size() - 4);
  for (const std::string& name : {data, stem + ".docguard.jsonl", std::string("checksum.txt")}) {
    EXPECT_EQ(mode_of(dir_ / "nested" / name), 0600u) << name;
  }
}

TEST_F(RecordingFilesTest, APlantedChecksumLinkIsNotFollowed) {
  make_private_directory();
  const fs::path target = dir_.string() + "-target";
  std::ofstream(target) << "";
  fs::create_symlink(target, dir_ / "checksum.txt");
  RecordingFiles files(dir_, 1 << 20, 1 << 20);
  files.open();
  files.write({RecordedEvent::kRequest, 1, "s", 0, 1}, std::vector<uint8_t>(100, 1), "{}");
  try {
    files.close();
    ADD_FAILURE() << "a checksum.txt link was written through";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fs::file_size(target), 0u);
  fs::remove(target);
}

TEST_F(RecordingFilesTest, APlantedChecksumFifoFailsAtOnce) {
  make_private_directory();
  ASSERT_EQ(::mkfifo((dir_ / "checksum.txt").c_str(), 0600), 0);
  RecordingFiles files(dir_, 1 << 20, 1 << 20);
  files.open();
  files.write({RecordedEvent::kRequest, 1, "s", 0, 1}, std::vector<uint8_t>(100, 1), "{}");
  try {
    files.close();  // would wait for a reader of the FIFO, forever, if opened to block
    ADD_FAILURE() << "a checksum.txt FIFO was written to";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("FIFO"), std::string::npos) << e.what();
  }
}

TEST_F(RecordingFilesTest, APlantedDataFileNameIsSkippedNotFollowed) {
  // Links under the names of the next two seconds: the recorder opens past them, writes none.
  make_private_directory();
  const fs::path target = dir_.string() + "-target";
  std::ofstream(target) << "";
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  for (int64_t ms = now; ms < now + 2000; ++ms) {
    fs::create_symlink(target, dir_ / (std::to_string(ms) + ".bin"));
  }
  RecordingFiles files(dir_, 1 << 20, 1 << 20);
  files.open();
  files.write({RecordedEvent::kRequest, 1, "s", 0, 1}, std::vector<uint8_t>(100, 1), "{}");
  files.close();
  EXPECT_EQ(fs::file_size(target), 0u);
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(dir_ / files.file_names().front())));
  fs::remove(target);
}

TEST_F(RecordingFilesTest, ADirectoryThatIsALinkIsRefused) {
  const fs::path real = dir_.string() + "-real";
  fs::create_directories(real);
  fs::create_symlink(real, dir_);
  RecordingFiles files(dir_, 1 << 20, 1 << 20);
  EXPECT_THROW(files.open(), std::runtime_error);
  EXPECT_TRUE(fs::is_empty(real));
  fs::remove_all(real);
}

TEST_F(RecordingFilesTest, ADirectoryOthersMayWriteInIsRefused) {
  for (const fs::perms writable : {fs::perms::group_write, fs::perms::others_write}) {
    make_private_directory();
    fs::permissions(dir_, writable, fs::perm_options::add);
    RecordingFiles files(dir_, 1 << 20, 1 << 20);
    try {
      files.open();
      ADD_FAILURE() << "a directory others may write in was used";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("writable by its group or others"), std::string::npos)
          << e.what();
    }
    EXPECT_TRUE(fs::is_empty(dir_));
    fs::remove_all(dir_);
  }
}

TEST_F(RecordingFilesTest, ADirectoryOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can give a directory to another user";
  make_private_directory();
  ASSERT_EQ(::chown(dir_.c_str(), 65534, 65534), 0);
  RecordingFiles files(dir_, 1 << 20, 1 << 20);
  try {
    files.open();
    ADD_FAILURE() << "another user's directory was used";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not owned by the user docguard runs as"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(RecordingFilesTest, AFlushPutsWhatWasWrittenInTheFilesBeforeTheyClose) {
  RecordingFiles files(dir_, 1 << 20, 1 << 20);
  files.open();
  files.write({RecordedEvent::kRequest, 1, "s", 0, 1}, std::vector<uint8_t>(100, 1), "{}");
  const std::string data = files.file_names().front();
  const std::string side = data.substr(0, data.size() - 4) + ".docguard.jsonl";
  files.flush();
  // Read while the files are still open, as after a docguard killed here.
  EXPECT_EQ(fs::file_size(dir_ / data), files.bytes() - 3);
  EXPECT_EQ(fs::file_size(dir_ / side), 3u);
  files.close();
}

}  // namespace
}  // namespace docguard::recording
