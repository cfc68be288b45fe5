// Every mongodump layout gives the same findings; broken inputs give an error naming the file
// and the byte offset.
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

#include "docguard/advisor/detectors.h"
#include "docguard/advisor/dump_profiler.h"
#include "docguard/advisor/report.h"
#include "memory_stream.h"
#include "test_documents.h"

namespace docguard::advisor {
namespace {
namespace DOCGUARD_UNITY_ID {

namespace fs = std::filesystem;
const fs::path kShop = fs::path(DOCGUARD_DUMP_FIXTURES) / "shop";

std::string gunzip(const fs::path& path) {
  gzFile in = gzopen(path.c_str(), "rb");
  EXPECT_NE(in, nullptr) << path;
  std::string out;
  char buffer[1 << 16];
  int n;
  while ((n = gzread(in, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<size_t>(n));
  gzclose(in);
  return out;
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<long>(bytes.size()));
}

// The plain layouts, inflated from the stored gzipped ones (see tests/fixtures/dumps/README.md).
class ShopDump : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("advisor-dumps-" + std::to_string(getpid()));
    fs::create_directories(root_ / "dir" / "shop");
    for (const auto& entry : fs::directory_iterator(kShop / "dir-gzip" / "shop")) {
      const std::string name = entry.path().filename().string();
      write_file(root_ / "dir" / "shop" / name.substr(0, name.size() - 3), gunzip(entry.path()));
    }
    write_file(root_ / "shop.archive", gunzip(kShop / "shop.archive.gz"));
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }
  static fs::path root_;
};
fs::path ShopDump::root_;

// Where a read stopped, or nothing when it succeeded: these tests look at the stopping point.
std::optional<ReadError> failure_of(const ReadResult& read) {
  if (read) return std::nullopt;
  return read.error();
}
template <class... Args>
std::optional<ReadError> dump_failure(Args&&... args) {
  return failure_of(read_dump(std::forward<Args>(args)...));
}
template <class... Args>
std::optional<ReadError> memory_failure(Args&&... args) {
  return failure_of(docguard::testing::read_stream_from_memory(std::forward<Args>(args)...));
}

std::vector<Finding> scan(const fs::path& path) {
  AdvisorSettings settings;
  DumpProfiler profiler(settings);
  const auto error = dump_failure(path.string(), profiler);
  EXPECT_FALSE(error) << error->to_string();
  return run_offline_detectors(profiler.profiles(), settings);
}

std::string render(const std::vector<Finding>& findings) {
  std::string out;
  for (const Finding& f : findings) {
    out += f.db + "." + f.collection + " " + kind_name(f.kind) + " " + severity_name(f.severity) +
           " " + f.field + " | " + f.evidence + " | " + f.suggestion + "\n";
  }
  return out;
}

TEST_F(ShopDump, EveryLayoutGivesTheSameFindings) {
  const std::string from_dir = render(scan(root_ / "dir"));
  EXPECT_EQ(render(scan(root_ / "dir" / "shop")), from_dir);
  EXPECT_EQ(render(scan(kShop / "dir-gzip")), from_dir);
  EXPECT_EQ(render(scan(root_ / "shop.archive")), from_dir);
  EXPECT_EQ(render(scan(kShop / "shop.archive.gz")), from_dir);
}

TEST_F(ShopDump, FindsWhatTheDumpWasShapedToShow) {
  const auto findings = scan(kShop / "shop.archive.gz");
  std::set<std::tuple<std::string, Finding::Kind, std::string>> got;
  for (const Finding& f : findings) got.emplace(f.collection, f.kind, f.field);
  for (const auto& expected : std::vector<std::tuple<std::string, Finding::Kind, std::string>>{
           {"products", Finding::Kind::kOutlier, "reviews"},
           {"products", Finding::Kind::kLargeArray, "reviews"},
           {"reviews", Finding::Kind::kUnindexedReference, "productId"},
           {"events", Finding::Kind::kBucket, "sensorId"},
           {"catalog", Finding::Kind::kAttribute, "attr_*"},
           {"pages", Finding::Kind::kBloatedDocuments, "html"},
           {"pages", Finding::Kind::kDeepNesting, "tree"}}) {
    EXPECT_TRUE(got.count(expected))
        << std::get<0>(expected) << " " << kind_name(std::get<1>(expected));
  }
  for (const Finding& f : findings) {
    if (f.collection == "customers") {
      EXPECT_EQ(f.kind, Finding::Kind::kNoValidator) << f.evidence;
    }
    if (f.collection == "orders") {
      EXPECT_NE(f.kind, Finding::Kind::kUnindexedReference) << f.evidence;
    }
  }
}

TEST_F(ShopDump, ASingleBsonFileIsACollection) {
  const auto findings = scan(root_ / "dir" / "shop" / "products.bson");
  EXPECT_EQ(test_documents::count_kind(findings, Finding::Kind::kOutlier, "reviews"), 1);
}

struct Recorder final : DumpVisitor {
  void on_collection(const CollectionMetadata& m) override { collections.push_back(m.collection); }
  base::Expected<void> on_document(std::string_view, std::string_view collection, const uint8_t*,
                                   uint32_t) override {
    documents.emplace_back(collection);
    return {};
  }
  std::vector<std::string> collections, documents;
};

std::optional<ReadError> read_bytes(const std::string& name, const std::string& bytes) {
  Recorder recorder;
  return memory_failure(name, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                        recorder);
}

std::string document_bytes(int id) {
  bson_t* doc = test_documents::document_with_array(id, "a", 2);
  std::string out(reinterpret_cast<const char*>(bson_get_data(doc)), doc->len);
  bson_destroy(doc);
  return out;
}

TEST(DumpReaderErrors, EmptyInputNamesTheFile) {
  const auto error = read_bytes("shop.empty", "");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->file, "shop.empty");
  EXPECT_EQ(error->offset, 0u);
}

TEST(DumpReaderErrors, TruncatedDocumentGivesItsOffset) {
  const std::string one = document_bytes(1);
  const auto error = read_bytes("shop.c", one + one.substr(0, one.size() - 3));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->offset, one.size());
  EXPECT_NE(error->to_string().find("shop.c: at byte offset " + std::to_string(one.size())),
            std::string::npos);
}

TEST(DumpReaderErrors, BadLengthAndCorruptContentGiveTheirOffset) {
  const std::string one = document_bytes(1);
  std::string bad_length = one + one;
  bad_length[one.size()] = 3;  // length 3 < 5
  bad_length[one.size() + 1] = bad_length[one.size() + 2] = bad_length[one.size() + 3] = 0;
  auto error = read_bytes("shop.c", bad_length);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->offset, one.size());

  AdvisorSettings settings;
  DumpProfiler profiler(settings);
  std::string corrupt = one + one;
  corrupt[one.size() + 4] = 0x42;  // unknown element type in the second document
  error = memory_failure("shop.c", reinterpret_cast<const uint8_t*>(corrupt.data()), corrupt.size(),
                         profiler);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->offset, one.size());
  EXPECT_NE(error->message.find("corrupt"), std::string::npos);
}

TEST(DumpReaderErrors, DocumentsPastTheLimitAreRefusedBeforeBuffering) {
  const std::string one = document_bytes(1);
  Recorder recorder;
  ReaderLimits limits;
  limits.max_document_bytes = static_cast<uint32_t>(one.size()) - 1;
  const std::string two = one + one;
  const auto error = memory_failure("shop.c", reinterpret_cast<const uint8_t*>(two.data()),
                                    two.size(), recorder, limits);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->offset, 0u);
  EXPECT_NE(error->message.find("exceeds the document limit"), std::string::npos);
}

std::string header(const char* db, const char* collection, bool eof) {
  bson_t* doc = bson_new();
  BSON_APPEND_UTF8(doc, "db", db);
  BSON_APPEND_UTF8(doc, "collection", collection);
  if (eof) BSON_APPEND_BOOL(doc, "EOF", true);
  std::string out(reinterpret_cast<const char*>(bson_get_data(doc)), doc->len);
  bson_destroy(doc);
  return out;
}

const std::string kTerminator("\xff\xff\xff\xff", 4);

std::string archive_with_interleaved_blocks() {
  std::string a = "\x6d\xe2\x99\x81" + header("x", "header", false);
  a += header("shop", "a", false) + header("shop", "b", false) + kTerminator;
  a += header("shop", "a", false) + document_bytes(1) + document_bytes(2) + kTerminator;
  a += header("shop", "b", false) + document_bytes(3) + kTerminator;
  a += header("shop", "a", false) + document_bytes(4) + kTerminator;
  a += header("shop", "a", true) + kTerminator + header("shop", "b", true) + kTerminator;
  return a;
}

TEST(ArchiveReader, ReadsInterleavedBlocks) {
  const std::string archive = archive_with_interleaved_blocks();
  Recorder recorder;
  const auto error = memory_failure("t.archive", reinterpret_cast<const uint8_t*>(archive.data()),
                                    archive.size(), recorder);
  ASSERT_FALSE(error) << error->to_string();
  EXPECT_EQ(recorder.collections, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(recorder.documents, (std::vector<std::string>{"a", "a", "b", "a"}));
}

TEST(ArchiveReader, EveryTruncationIsAnErrorWithAnOffsetInside) {
  const std::string archive = archive_with_interleaved_blocks();
  // Cuts at a block boundary are a valid (shorter) archive; every other cut must fail cleanly.
  int errors = 0;
  for (size_t cut = 1; cut < archive.size(); ++cut) {
    if (const auto error = read_bytes("t.archive", archive.substr(0, cut))) {
      EXPECT_LE(error->offset, cut);
      ++errors;
    }
  }
  EXPECT_GT(errors, static_cast<int>(archive.size()) - 10);
}

TEST_F(ShopDump, TruncatedGzipAndMissingPathsAreErrors) {
  const std::string gz = [] {
    std::ifstream in(kShop / "shop.archive.gz", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  write_file(root_ / "cut.archive.gz", gz.substr(0, gz.size() / 2));
  AdvisorSettings settings;
  DumpProfiler profiler(settings);
  auto error = dump_failure((root_ / "cut.archive.gz").string(), profiler);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->file, (root_ / "cut.archive.gz").string());
  EXPECT_GT(error->offset, 0u);

  error = dump_failure((root_ / "nothing-here").string(), profiler);
  ASSERT_TRUE(error);
  fs::create_directories(root_ / "empty-dir");
  error = dump_failure((root_ / "empty-dir").string(), profiler);
  ASSERT_TRUE(error);
  EXPECT_NE(error->message.find("no .bson"), std::string::npos);
}

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::advisor
