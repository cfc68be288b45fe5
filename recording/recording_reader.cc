#include "docguard/recording/recording_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <system_error>

#include "docguard/base/private_files.h"
#include "docguard/codec/bson_elements.h"
#include "docguard/codec/crc32c.h"
#include "docguard/codec/recording_packet.h"

namespace docguard::recording {
namespace {

// A data file is named by the milliseconds at which it was opened: digits, then ".bin".
bool is_data_file(const std::string& name) {
  constexpr std::string_view kSuffix = ".bin";
  if (name.size() <= kSuffix.size() || !name.ends_with(kSuffix)) return false;
  return std::all_of(name.begin(), name.end() - kSuffix.size(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

// One checksum.txt line: "<name>\t<crc in hex>".
void read_checksum_line(const std::string& line, std::map<std::string, uint32_t>& sums) {
  const auto tab = line.find('\t');
  if (tab == std::string::npos || tab + 1 >= line.size()) return;
  try {
    size_t used = 0;
    const unsigned long crc = std::stoul(line.substr(tab + 1), &used, 16);
    if (used == line.size() - tab - 1 && crc <= 0xffffffffUL) {
      sums[line.substr(0, tab)] = static_cast<uint32_t>(crc);
    }
  } catch (const std::exception&) {
    return;
  }
}

// checksum.txt: one line per closed file. A line that does not read is skipped: its file is
// then read as unverified, never refused for a line the reader cannot use. The file itself must
// be a regular file (a FIFO planted under its name would block the reader forever).
base::Expected<std::map<std::string, uint32_t>> read_checksums(const std::filesystem::path& path) {
  std::map<std::string, uint32_t> sums;
  auto opened = base::open_regular_file(path);
  if (!opened) return opened.error();
  std::FILE* in = *opened;
  if (in == nullptr) return sums;  // no file closed yet: every file unverified
  std::string line;
  char chunk[4096];
  while (std::fgets(chunk, sizeof chunk, in) != nullptr) {
    line += chunk;
    if (!line.ends_with('\n')) {
      if (line.size() > sizeof chunk) line.clear();  // no checksum line is this long
      continue;
    }
    line.pop_back();
    read_checksum_line(line, sums);
    line.clear();
  }
  if (!line.empty()) read_checksum_line(line, sums);
  std::fclose(in);
  return sums;
}

}  // namespace

base::Expected<RecordingReader> RecordingReader::open(const std::filesystem::path& dir,
                                                      ReadOptions options) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) {
    return base::Error{base::ErrorKind::kIo, base::ErrorSource::kDocguard,
                       fmt::format("cannot read the recording {}: {}", dir.string(), ec.message())};
  }
  RecordingReader reader;
  reader.directory_ = dir;
  reader.options_ = options;
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    if (!is_data_file(name)) continue;
    // Refused here, before any reading: a FIFO would block the reader, a link lead elsewhere.
    std::error_code type_error;
    if (!entry.is_symlink(type_error) && entry.is_regular_file(type_error)) {
      reader.files_.push_back(name);
      continue;
    }
    return base::bad_input(fmt::format("{} is not a regular file: refused", entry.path().string()));
  }
  if (reader.files_.empty()) {
    return base::bad_input(
        fmt::format("{} holds no recording (no <milliseconds>.bin file)", dir.string()));
  }
  // Names are the opening times, written with the same number of digits for centuries: name
  // order is write order.
  std::sort(reader.files_.begin(), reader.files_.end());
  auto checksums = read_checksums(dir / "checksum.txt");
  if (!checksums) return checksums.error();
  reader.checksums_ = std::move(*checksums);
  return reader;
}

RecordingReader::RecordingReader(RecordingReader&& other) noexcept { *this = std::move(other); }

RecordingReader& RecordingReader::operator=(RecordingReader&& other) noexcept {
  if (this == &other) return *this;
  if (file_) std::fclose(file_);
  if (side_) std::fclose(side_);
  side_ = std::exchange(other.side_, nullptr);
  options_ = other.options_;
  side_line_ = std::move(other.side_line_);
  directory_ = std::move(other.directory_);
  files_ = std::move(other.files_);
  checksums_ = std::move(other.checksums_);
  next_file_ = other.next_file_;
  file_ = std::exchange(other.file_, nullptr);
  offset_ = other.offset_;
  crc_ = other.crc_;
  verified_ = other.verified_;
  unverified_ = other.unverified_;
  return *this;
}

RecordingReader::~RecordingReader() {
  if (file_) std::fclose(file_);
  if (side_) std::fclose(side_);
}

base::Error RecordingReader::corrupt(const std::string& what) const {
  return base::bad_input(fmt::format(
      "{}: {} at byte {}", (directory_ / files_[next_file_ - 1]).string(), what, offset_));
}

base::Expected<bool> RecordingReader::open_next_file() {
  if (next_file_ >= files_.size()) return false;
  const auto path = directory_ / files_[next_file_++];
  // Checked again as it is opened: the directory may have changed since it was listed.
  auto data = base::open_regular_file(path);
  if (!data) return data.error();
  if (*data == nullptr) {
    return base::Error{base::ErrorKind::kIo, base::ErrorSource::kDocguard,
                       fmt::format("cannot open {}: it is gone", path.string())};
  }
  file_ = *data;
  offset_ = 0;
  crc_ = 0;
  if (side_) std::fclose(side_);
  side_ = nullptr;
  side_line_.clear();
  // <ms>.bin beside <ms>.docguard.jsonl; a missing side file leaves the packets without facts.
  auto side = base::open_regular_file(directory_ / (path.stem().string() + ".docguard.jsonl"));
  if (!side) return side.error();
  side_ = *side;
  return true;
}

bool RecordingReader::read(uint8_t* out, size_t n) {
  if (n == 0) return true;
  if (std::fread(out, 1, n, file_) != n) return false;
  crc_ = codec::crc32c({out, n}, crc_);
  return true;
}

std::string RecordingReader::torn_hint() const {
  return checksums_.contains(files_[next_file_ - 1])
             ? ""
             : " (the file has no checksum: --accept-torn-tail reads it up to the cut)";
}

base::Expected<void> RecordingReader::finish_file() {
  std::fclose(file_);
  file_ = nullptr;
  const auto sum = checksums_.find(files_[next_file_ - 1]);
  if (sum == checksums_.end()) {
    ++unverified_;
    return {};
  }
  if (sum->second != crc_) {
    return corrupt(fmt::format("CRC-32C {:x}, not the {:x} checksum.txt gives", crc_, sum->second));
  }
  ++verified_;
  return {};
}

namespace {

std::string string_member(const bson_t& doc, const char* key) {
  codec::BsonElements it(&doc);
  if (!it.find(key) || !it.holds_utf8()) return {};
  return std::string(it.utf8());
}

bool bool_member(const bson_t& doc, const char* key) {
  codec::BsonElements it(&doc);
  return it.find(key) && it.as_bool();
}

}  // namespace

base::Expected<void> RecordingReader::read_side(RecordedPacket& packet) {
  // Side lines are written in packet order, one per packet (docs/recording.md): skip lines of
  // earlier packets, keep a line of a later one for its packet.
  while (side_ != nullptr) {
    if (side_line_.empty()) {
      // A side line is a few hundred bytes; one past the bound is a damaged or hostile file,
      // never read whole into memory.
      constexpr size_t kMaxSideLine = 1U << 20;
      char chunk[4096];
      bool whole = false;
      while (!whole && std::fgets(chunk, sizeof chunk, side_) != nullptr) {
        side_line_ += chunk;
        whole = !side_line_.empty() && side_line_.back() == '\n';
        if (side_line_.size() > kMaxSideLine) {
          return base::bad_input(fmt::format("{}: a side line longer than {} bytes",
                                             (directory_ / files_[next_file_ - 1]).string(),
                                             kMaxSideLine));
        }
      }
      if (side_line_.empty()) return {};
      while (!side_line_.empty() && (side_line_.back() == '\n' || side_line_.back() == '\r')) {
        side_line_.pop_back();
      }
      if (side_line_.empty()) continue;
    }
    bson_error_t error;
    bson_t doc;
    if (!bson_init_from_json(&doc, side_line_.data(), static_cast<ssize_t>(side_line_.size()),
                             &error)) {
      return base::bad_input(fmt::format("{}: a side line is not JSON: {}",
                                         (directory_ / files_[next_file_ - 1]).string(),
                                         error.message));
    }
    codec::BsonElements order(&doc);
    const uint64_t line_order =
        order.find("order") && order.holds_number() ? static_cast<uint64_t>(order.as_int64()) : 0;
    if (line_order > packet.order) {
      bson_destroy(&doc);
      return {};  // no line for this packet; the read-ahead one waits for its own
    }
    if (line_order == packet.order) {
      SideFacts& f = packet.side;
      f.present = true;
      f.app = string_member(doc, "app");
      f.user = string_member(doc, "user");
      f.verdict = string_member(doc, "verdict");
      f.rule = string_member(doc, "rule");
      f.command = string_member(doc, "command");
      f.ns = string_member(doc, "ns");
      f.shape = string_member(doc, "shape");
      f.upstream = string_member(doc, "upstream");
      f.upstream_resolved = string_member(doc, "upstream_resolved");
      if (bson_iter_t source;
          bson_iter_init_find(&source, &doc, "source") && BSON_ITER_HOLDS_DOCUMENT(&source)) {
        uint32_t length = 0;
        const uint8_t* data = nullptr;
        bson_iter_document(&source, &length, &data);
        bson_t object;
        if (bson_init_static(&object, data, length)) f.source = source_from_json(object);
      }
      f.refused = bool_member(doc, "refused");
      f.unrecorded = bool_member(doc, "unrecorded");
      codec::BsonElements statements(&doc);
      if (statements.find("refused_statements") && statements.holds_array()) {
        for (codec::BsonElements i(statements.container()); i.next();) {
          if (i.holds_number()) f.refused_statements.push_back(static_cast<int32_t>(i.as_int64()));
        }
      }
    }
    bson_destroy(&doc);
    side_line_.clear();
    if (line_order == packet.order) return {};
  }
  return {};
}

base::Expected<std::optional<RecordedPacket>> RecordingReader::next() {
  while (true) {
    if (!file_) {
      auto opened = open_next_file();
      if (!opened) return opened.error();
      if (!*opened) return std::optional<RecordedPacket>{};
    }
    const uint64_t start = offset_;
    const bool torn_ok = options_.accept_torn_tail && !checksums_.contains(files_[next_file_ - 1]);
    uint8_t size_bytes[4];
    const size_t got = std::fread(size_bytes, 1, 4, file_);
    if (got == 0 && std::feof(file_)) {
      if (auto done = finish_file(); !done) return done.error();
      continue;
    }
    if (got < 4) {
      if (!torn_ok) return corrupt("a packet size cut short" + torn_hint());
      std::fclose(file_);  // the writer stopped in the middle of this packet: the file ends here
      file_ = nullptr;
      ++unverified_;
      continue;
    }
    std::vector<uint8_t> packet(4);
    std::copy(size_bytes, size_bytes + 4, packet.begin());
    const auto size = static_cast<uint32_t>(codec::load_le32(size_bytes));
    if (size < codec::kMinPacketBytes || size > kMaxPacketBytes) {
      return corrupt(fmt::format("a packet of {} bytes", size));
    }
    packet.resize(size);
    crc_ = codec::crc32c({packet.data(), 4}, crc_);
    if (!read(packet.data() + 4, size - 4)) {
      if (torn_ok) {
        std::fclose(file_);
        file_ = nullptr;
        ++unverified_;
        continue;
      }
      return corrupt(fmt::format("a packet of {} bytes cut short{}", size, torn_hint()));
    }
    const auto view = codec::parse_packet(packet);
    if (!view) return corrupt(view.error().message);
    offset_ = start + size;
    RecordedPacket out;
    out.event = view->header.event;
    out.connection = view->header.connection;
    out.session = std::string(view->header.session);
    out.offset_micros = view->header.offset_micros;
    out.order = view->header.order;
    out.message.assign(view->message.begin(), view->message.end());
    if (auto side = read_side(out); !side) return side.error();
    return std::optional<RecordedPacket>{std::move(out)};
  }
}

}  // namespace docguard::recording
