// Reading a recording back: every packet of every data file in order, across rotations, the
// checksums checked, a torn tail of an unclosed file tolerated, corruption named with its file.
#include "docguard/recording/recording_reader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace docguard::recording {
namespace {

namespace fs = std::filesystem;

class RecordingReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("docguard-reader-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Ten requests of 100 bytes each on connections 1 and 2, two per data file.
  std::vector<std::string> write_ten() {
    RecordingFiles files(dir_, /*max_file_bytes=*/300, /*max_total_bytes=*/1 << 20);
    files.open();
    for (uint64_t order = 1; order <= 10; ++order) {
      const std::vector<uint8_t> message(100, static_cast<uint8_t>(order));
      const auto event = order % 2 ? RecordedEvent::kRequest : RecordedEvent::kResponse;
      files.write({event, 1 + order % 2, "127.0.0.1:1", order * 10, order}, message, "{}");
    }
    files.close();
    return files.file_names();
  }

  std::vector<RecordedPacket> read_all(RecordingReader& reader) {
    std::vector<RecordedPacket> out;
    while (true) {
      auto next = reader.next();
      EXPECT_TRUE(next.ok()) << (next.ok() ? "" : next.error().message);
      if (!next.ok() || !*next) break;
      out.push_back(std::move(**next));
    }
    return out;
  }

  fs::path dir_;
};

TEST_F(RecordingReaderTest, ReadsEveryPacketInOrderAcrossRotations) {
  const auto names = write_ten();
  ASSERT_EQ(names.size(), 5u);
  auto reader = RecordingReader::open(dir_);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_EQ(reader->data_files(), names);
  const auto packets = read_all(*reader);
  ASSERT_EQ(packets.size(), 10u);
  for (uint64_t i = 0; i < 10; ++i) {
    const auto& p = packets[i];
    EXPECT_EQ(p.order, i + 1);
    EXPECT_EQ(p.offset_micros, (i + 1) * 10);
    EXPECT_EQ(p.connection, 1 + (i + 1) % 2);
    EXPECT_EQ(p.event, (i + 1) % 2 ? RecordedEvent::kRequest : RecordedEvent::kResponse);
    EXPECT_EQ(p.session, "127.0.0.1:1");
    ASSERT_EQ(p.message.size(), 100u);
    EXPECT_EQ(p.message.front(), i + 1);
  }
  EXPECT_EQ(reader->verified_files(), 5);
  EXPECT_EQ(reader->unverified_files(), 0);
}

TEST_F(RecordingReaderTest, AnAlteredFileFailsItsChecksum) {
  const auto names = write_ten();
  {
    std::fstream f(dir_ / names[2], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(60);
    f.put('\x7f');
  }
  auto reader = RecordingReader::open(dir_);
  ASSERT_TRUE(reader.ok());
  bool failed = false;
  for (int i = 0; i < 20 && !failed; ++i) {
    auto next = reader->next();
    if (!next.ok()) {
      failed = true;
      EXPECT_NE(next.error().message.find(names[2]), std::string::npos) << next.error().message;
      EXPECT_NE(next.error().message.find("CRC-32C"), std::string::npos) << next.error().message;
    } else if (!*next) {
      break;
    }
  }
  EXPECT_TRUE(failed);
}

TEST_F(RecordingReaderTest, AnUnclosedFileIsReadUpToItsTornTailOnlyWhenAccepted) {
  const auto names = write_ten();
  // As a docguard killed while writing leaves it: no checksum line, the last packet cut short.
  fs::remove(dir_ / "checksum.txt");
  const auto last = dir_ / names.back();
  fs::resize_file(last, fs::file_size(last) - 7);
  {
    // Unverified and cut: an error that names the file and the way to read it anyway.
    auto reader = RecordingReader::open(dir_);
    ASSERT_TRUE(reader.ok());
    base::Expected<std::optional<RecordedPacket>> next = std::optional<RecordedPacket>{};
    for (int i = 0; i < 20; ++i) {
      next = reader->next();
      if (!next.ok() || !*next) break;
    }
    ASSERT_FALSE(next.ok());
    EXPECT_NE(next.error().message.find(names.back()), std::string::npos);
    EXPECT_NE(next.error().message.find("--accept-torn-tail"), std::string::npos);
  }
  auto reader = RecordingReader::open(dir_, ReadOptions{/*accept_torn_tail=*/true});
  ASSERT_TRUE(reader.ok());
  const auto packets = read_all(*reader);
  EXPECT_EQ(packets.size(), 9u);
  EXPECT_EQ(reader->unverified_files(), 5);
}

TEST_F(RecordingReaderTest, AHugeSideLineIsAnErrorNotAnAllocation) {
  fs::create_directories(dir_);
  RecordingFiles files(dir_, 1 << 20, 8 << 20);
  files.open();
  const std::vector<uint8_t> message(40, 1);
  files.write({RecordedEvent::kRequest, 1, "s", 1, 1}, message,
              "{\"order\":1,\"pad\":\"" + std::string(2 << 20, 'x') + "\"}");
  files.close();
  auto reader = RecordingReader::open(dir_);
  ASSERT_TRUE(reader.ok());
  auto next = reader->next();
  ASSERT_FALSE(next.ok());
  EXPECT_NE(next.error().message.find("side line longer"), std::string::npos);
}

TEST_F(RecordingReaderTest, SideFactsAreReadInStepWithThePackets) {
  fs::create_directories(dir_);
  RecordingFiles files(dir_, 1 << 20, 1 << 20);
  files.open();
  const std::vector<uint8_t> message(40, 1);
  files.write(
      {RecordedEvent::kRequest, 1, "s", 1, 1}, message,
      R"({"connection":1,"order":1,"event":"request","app":"a","user":"u@admin","verdict":"answered_by_docguard","refused":true})");
  files.write({RecordedEvent::kResponse, 1, "s", 2, 2}, message, "");
  files.write(
      {RecordedEvent::kRequest, 1, "s", 3, 3}, message,
      R"({"connection":1,"order":3,"event":"request","verdict":"forwarded","refused":true,"refused_statements":[1,4]})");
  files.close();
  auto reader = RecordingReader::open(dir_);
  ASSERT_TRUE(reader.ok());
  const auto packets = read_all(*reader);
  ASSERT_EQ(packets.size(), 3u);
  EXPECT_EQ(packets[0].side.app, "a");
  EXPECT_EQ(packets[0].side.verdict, "answered_by_docguard");
  EXPECT_TRUE(packets[0].side.refused);
  EXPECT_FALSE(packets[1].side.present);
  EXPECT_EQ(packets[2].side.refused_statements, (std::vector<int32_t>{1, 4}));
}

TEST_F(RecordingReaderTest, AnImpossibleSizeIsCorruption) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "1700000000000.bin", std::ios::binary).write("\x05\x00\x00\x00\x00", 5);
  auto reader = RecordingReader::open(dir_);
  ASSERT_TRUE(reader.ok());
  auto next = reader->next();
  ASSERT_FALSE(next.ok());
  EXPECT_NE(next.error().message.find("a packet of 5 bytes"), std::string::npos);
}

TEST_F(RecordingReaderTest, ADirectoryWithoutDataFilesIsAnError) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "notes.txt") << "x";
  auto reader = RecordingReader::open(dir_);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.error().kind, base::ErrorKind::kBadInput);
  EXPECT_FALSE(RecordingReader::open(dir_ / "missing").ok());
}

// A name of the recording that is not a regular file: refused at once, never read (a FIFO
// would block the reader until someone writes to it, which nobody does).
std::string error_with(const fs::path& dir, const fs::path& planted, bool fifo) {
  fs::remove(planted);
  if (fifo) {
    EXPECT_EQ(::mkfifo(planted.c_str(), 0600), 0);
  } else {
    fs::create_symlink("/dev/zero", planted);
  }
  auto reader = RecordingReader::open(dir);
  std::string error = reader ? "" : reader.error().message;
  while (reader && error.empty()) {
    auto packet = reader->next();
    if (!packet) error = packet.error().message;
    if (packet && !*packet) break;
  }
  return error;
}

TEST_F(RecordingReaderTest, ANameThatIsNoRegularFileIsRefusedWithoutBlocking) {
  const auto started = std::chrono::steady_clock::now();
  for (bool fifo : {true, false}) {
    for (int planted = 0; planted < 3; ++planted) {
      fs::remove_all(dir_);
      const std::string first = write_ten().front();
      const std::string name = planted == 0 ? "99999999999999.bin"
                               : planted == 1
                                   ? first.substr(0, first.size() - 4) + ".docguard.jsonl"
                                   : "checksum.txt";
      const std::string error = error_with(dir_, dir_ / name, fifo);
      EXPECT_NE(error.find("not a regular file"), std::string::npos)
          << name << (fifo ? " (FIFO): " : " (link): ") << error;
    }
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
}

}  // namespace
}  // namespace docguard::recording
