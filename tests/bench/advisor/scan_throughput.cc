// Scan throughput.
//   advisor_scan_bench [FILE [MEGABYTES]]
// Writes FILE (default /tmp/docguard-advisor-bench.bson, ~1 GB) of order-like documents unless it
// already has the size asked for, then scans it as `docguard scan` does (read, frame, profile,
// detect) on one thread and prints MB/s. Run it twice: the second run reads from the page cache,
// which is what the number means (the walk, not the disk).
#include <bson/bson.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>

#include "docguard/advisor/detectors.h"
#include "docguard/advisor/dump_profiler.h"

namespace {

using docguard::advisor::AdvisorSettings;
using docguard::advisor::DumpProfiler;

// An order: ObjectId _id, references, a date, a status, an address, 1-8 line items, tags.
void append_order(bson_t* doc, std::mt19937_64& rng, int64_t n) {
  bson_oid_t oid;
  bson_oid_init(&oid, nullptr);
  BSON_APPEND_OID(doc, "_id", &oid);
  BSON_APPEND_INT64(doc, "customerId", static_cast<int64_t>(rng() % 100000));
  BSON_APPEND_DATE_TIME(doc, "createdAt", 1700000000000 + n * 1000);
  BSON_APPEND_UTF8(doc, "status", (rng() % 4) ? "shipped" : "pending");
  bson_t address;
  BSON_APPEND_DOCUMENT_BEGIN(doc, "shippingAddress", &address);
  BSON_APPEND_UTF8(&address, "street", "1234 Long Example Street");
  BSON_APPEND_UTF8(&address, "city", "Springfield");
  BSON_APPEND_UTF8(&address, "zip", "94105");
  BSON_APPEND_UTF8(&address, "country", "US");
  bson_append_document_end(doc, &address);
  bson_t items;
  BSON_APPEND_ARRAY_BEGIN(doc, "items", &items);
  const int count = 1 + static_cast<int>(rng() % 8);
  for (int i = 0; i < count; ++i) {
    char key[16];
    std::snprintf(key, sizeof key, "%d", i);
    bson_t item;
    BSON_APPEND_DOCUMENT_BEGIN(&items, key, &item);
    BSON_APPEND_INT64(&item, "productId", static_cast<int64_t>(rng() % 50000));
    BSON_APPEND_UTF8(&item, "name", "Widget, stainless, large");
    BSON_APPEND_INT32(&item, "quantity", static_cast<int32_t>(1 + rng() % 5));
    BSON_APPEND_DOUBLE(&item, "price", static_cast<double>(rng() % 10000) / 100.0);
    bson_append_document_end(&items, &item);
  }
  bson_append_array_end(doc, &items);
  bson_t tags;
  BSON_APPEND_ARRAY_BEGIN(doc, "tags", &tags);
  BSON_APPEND_UTF8(&tags, "0", "gift");
  BSON_APPEND_UTF8(&tags, "1", "express");
  bson_append_array_end(doc, &tags);
  BSON_APPEND_DOUBLE(doc, "total", static_cast<double>(rng() % 100000) / 100.0);
  BSON_APPEND_BOOL(doc, "paid", rng() % 2);
}

void generate(const std::string& path, uint64_t bytes) {
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (!out) {
    std::perror(path.c_str());
    std::exit(2);
  }
  std::mt19937_64 rng(1);
  uint64_t written = 0;
  for (int64_t n = 0; written < bytes; ++n) {
    bson_t doc;
    bson_init(&doc);
    append_order(&doc, rng, n);
    std::fwrite(bson_get_data(&doc), 1, doc.len, out);
    written += doc.len;
    bson_destroy(&doc);
  }
  std::fclose(out);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "/tmp/docguard-advisor-bench.bson";
  const uint64_t megabytes = argc > 2 ? std::stoull(argv[2]) : 1000;
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) < megabytes * 1000 * 1000 || ec) {
    std::printf("writing %s (%llu MB)...\n", path.c_str(),
                static_cast<unsigned long long>(megabytes));
    generate(path, megabytes * 1000 * 1000);
  }
  for (int run = 0; run < 3; ++run) {
    AdvisorSettings settings;
    DumpProfiler profiler(settings);
    const auto start = std::chrono::steady_clock::now();
    if (auto read = docguard::advisor::read_dump(path, profiler); !read) {
      std::fprintf(stderr, "%s\n", read.error().to_string().c_str());
      return 2;
    }
    const auto findings = docguard::advisor::run_offline_detectors(profiler.profiles(), settings);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("run %d: %.1f MB in %.3f s = %.0f MB/s (%llu documents, %zu findings)\n", run,
                profiler.bytes() / 1e6, seconds, profiler.bytes() / 1e6 / seconds,
                static_cast<unsigned long long>(profiler.profiles().front()->documents()),
                findings.size());
  }
  return 0;
}
