// ClusterReader against a real FerretDB: listings skip the system databases, indexes and
// statistics come back raw, $sample falls back to find (FerretDB 1.24 answers NotImplemented),
// n == 0 reads everything, a view is listed as one, pacing spaces commands out, the stop flag
// ends a read, and commands are counted.
#include <bson/bson.h>
#include <gtest/gtest.h>
#include <mongoc/mongoc.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "docguard/cluster/cluster_reader.h"
#include "docguard/cluster/mongoc_log.h"
#include "ferretdb_process.h"

namespace docguard::cluster {
namespace {

using Clock = std::chrono::steady_clock;

std::string field_of(const ClusterReader::Document& doc, const char* key) {
  bson_t b;
  bson_iter_t it;
  if (!bson_init_static(&b, doc.data(), doc.size()) || !bson_iter_init_find(&it, &b, key) ||
      !BSON_ITER_HOLDS_UTF8(&it)) {
    return "";
  }
  return bson_iter_utf8(&it, nullptr);
}

class ReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    set_mongoc_log_handler({});
    const std::string bin = testing::find_ferretdb();
    if (bin.empty()) GTEST_SKIP() << "no FerretDB binary (set FERRETDB_BIN or DOCGUARD_TOOLS)";
    fdb_ = std::make_unique<testing::FerretDb>(bin);
    ASSERT_TRUE(fdb_->start());
    uri_ = "mongodb://" + fdb_->address() + "/";
    load();
  }

  // reader_it.items: 30 documents and an index on sku; reader_it.cheap: a view of it.
  void load() {
    mongoc_client_t* client = mongoc_client_new(uri_.c_str());
    mongoc_collection_t* items = mongoc_client_get_collection(client, "reader_it", "items");
    bson_error_t error;
    for (int i = 0; i < 30; ++i) {
      bson_t* doc =
          BCON_NEW("_id", BCON_INT32(i), "sku", BCON_INT32(i * 7), "price", BCON_DOUBLE(i * 1.5));
      ASSERT_TRUE(mongoc_collection_insert_one(items, doc, nullptr, nullptr, &error))
          << error.message;
      bson_destroy(doc);
    }
    bson_t* create_index =
        BCON_NEW("createIndexes", "items", "indexes", "[", "{", "key", "{", "sku", BCON_INT32(1),
                 "}", "name", "sku_1", "unique", BCON_BOOL(true), "}", "]");
    ASSERT_TRUE(
        mongoc_client_command_simple(client, "reader_it", create_index, nullptr, nullptr, &error))
        << error.message;
    bson_destroy(create_index);
    mongoc_collection_destroy(items);
    mongoc_client_destroy(client);
  }

  std::unique_ptr<ClusterReader> open(ReaderOptions options = {}) {
    options.uri = uri_;
    auto reader = ClusterReader::open(options);
    EXPECT_TRUE(reader.ok()) << (reader.ok() ? "" : reader.error().message);
    return reader ? std::move(reader).value() : nullptr;
  }

  std::unique_ptr<testing::FerretDb> fdb_;
  std::string uri_;
};

TEST_F(ReaderTest, ListingsIndexesAndStatistics) {
  auto reader = open();
  ASSERT_TRUE(reader);
  auto databases = reader->list_databases();
  ASSERT_TRUE(databases.ok()) << databases.error().message;
  EXPECT_EQ(databases.value(), std::vector<std::string>{"reader_it"});

  auto collections = reader->list_collections("reader_it");
  ASSERT_TRUE(collections.ok()) << collections.error().message;
  ASSERT_EQ(collections->size(), 1u);
  EXPECT_EQ(field_of(collections->front(), "name"), "items");

  auto indexes = reader->list_indexes("reader_it", "items");
  ASSERT_TRUE(indexes.ok()) << indexes.error().message;
  std::vector<std::string> names;
  for (const auto& index : indexes.value()) names.push_back(field_of(index, "name"));
  EXPECT_EQ(names, (std::vector<std::string>{"_id_", "sku_1"}));

  auto stats = reader->collection_stats("reader_it", "items");
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  bson_t doc;
  bson_iter_t it;
  ASSERT_TRUE(bson_init_static(&doc, stats->data(), stats->size()));
  ASSERT_TRUE(bson_iter_init_find(&it, &doc, "count"));
  EXPECT_EQ(bson_iter_as_int64(&it), 30);

  // Either usage numbers, or an error the caller can call "not supported".
  auto usage = reader->index_stats("reader_it", "items");
  if (!usage) {
    EXPECT_TRUE(is_not_supported(usage.error())) << usage.error().message;
  }

  auto missing = reader->list_indexes("reader_it", "no_such_collection");
  if (!missing) {
    EXPECT_GT(missing.error().code, 0) << missing.error().message;
  }
  EXPECT_GE(reader->commands_sent(), 6u);
}

TEST_F(ReaderTest, SampleFallsBackToFindAndZeroReadsAll) {
  auto reader = open();
  ASSERT_TRUE(reader);
  uint64_t seen = 0;
  auto counter = [&seen](const uint8_t*, uint32_t size) {
    EXPECT_GT(size, 5u);
    ++seen;
    return true;
  };
  auto sampled = reader->read_documents("reader_it", "items", 5, counter);
  ASSERT_TRUE(sampled.ok()) << sampled.error().message;
  EXPECT_TRUE(*sampled == ReadMethod::kSample || *sampled == ReadMethod::kFind);
  EXPECT_EQ(seen, 5u);

  seen = 0;
  auto series = reader->read_documents("reader_it", "items", 4, counter, /*timeseries=*/true);
  ASSERT_TRUE(series.ok());
  EXPECT_EQ(*series, ReadMethod::kFind);
  EXPECT_EQ(seen, 4u);

  seen = 0;
  auto all = reader->read_documents("reader_it", "items", 0, counter);
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ(*all, ReadMethod::kAll);
  EXPECT_EQ(seen, 30u);

  // The callback may stop early; that is not an error.
  seen = 0;
  auto early = reader->read_documents("reader_it", "items", 0,
                                      [&seen](const uint8_t*, uint32_t) { return ++seen < 3; });
  ASSERT_TRUE(early.ok());
  EXPECT_EQ(seen, 3u);
}

TEST_F(ReaderTest, PacingAndStop) {
  std::atomic<bool> stop{false};
  ReaderOptions options;
  options.max_commands_per_second = 10;
  options.stop = &stop;
  auto reader = open(options);
  ASSERT_TRUE(reader);
  const auto t0 = Clock::now();
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(reader->list_collections("reader_it").ok());
  // Four commands at ten a second: at least three gaps of 100 ms.
  EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(280));
  EXPECT_EQ(reader->commands_sent(), 4u);

  stop = true;
  auto stopped = reader->read_documents("reader_it", "items", 0,
                                        [](const uint8_t*, uint32_t) { return true; });
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.error().kind, ErrorKind::kStopped);
}

TEST_F(ReaderTest, CredentialsNeverInMessages) {
  ReaderOptions options;
  options.uri = uri_;
  options.username = "reader";
  options.password = "hunter2";
  auto reader = ClusterReader::open(options);
  ASSERT_TRUE(reader.ok());
  // FerretDB without authentication either ignores the credentials or refuses them.
  auto databases = reader.value()->list_databases();
  if (!databases) {
    EXPECT_EQ(databases.error().message.find("hunter2"), std::string::npos);
  }
  options.uri = "mongodb://reader:hunter2@127.0.0.1:99999/";
  auto bad = ClusterReader::open(options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::kConfiguration);
  EXPECT_EQ(bad.error().message.find("hunter2"), std::string::npos) << bad.error().message;
}

TEST(ReaderErrors, Classification) {
  EXPECT_TRUE(is_unauthorized(server_error("", 13)));
  EXPECT_TRUE(is_unauthorized(server_error("", 18)));
  EXPECT_FALSE(is_unauthorized(server_error("", 238)));
  EXPECT_TRUE(is_not_supported(server_error("", 238)));
  EXPECT_TRUE(is_not_supported(server_error("", 40324)));
  EXPECT_TRUE(is_not_supported(server_error("", 115)));
  EXPECT_FALSE(is_not_supported(server_error("", 13)));
  EXPECT_STREQ(read_method_name(ReadMethod::kSample), "$sample");
  EXPECT_STREQ(read_method_name(ReadMethod::kFind), "find");
  EXPECT_STREQ(read_method_name(ReadMethod::kAll), "all");
}

TEST(ReaderErrors, UnreachableServer) {
  ReaderOptions options;
  options.uri = "mongodb://u:hunter2@127.0.0.1:1/?serverSelectionTimeoutMS=200";
  auto reader = ClusterReader::open(options);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_EQ(reader.value()->redacted_uri(),
            "mongodb://u:****@127.0.0.1:1/?serverSelectionTimeoutMS=200");
  auto databases = reader.value()->list_databases();
  ASSERT_FALSE(databases.ok());
  EXPECT_EQ(databases.error().kind, ErrorKind::kConnect) << databases.error().message;
  EXPECT_EQ(databases.error().message.find("hunter2"), std::string::npos);
}

}  // namespace
}  // namespace docguard::cluster
