#include "docguard/introspection/introspection_lease.h"

#include <bson/bson.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <random>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/server_errors.h"

namespace docguard::introspection {
namespace {

constexpr const char* kLeaseCollection = "docguard_lease";
constexpr const char* kFactsCollection = "docguard_facts";
constexpr const char* kLeaseId = "introspection";
constexpr size_t kFactsPerCommand = 100;  // keeps each write well under the message limit

// A command built here and handed to the reader as bytes.
using Command = codec::ScopedBson;

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// `n` of an update or insert reply.
int64_t affected(const cluster::ClusterReader::Document& reply) {
  const auto size = static_cast<uint32_t>(reply.size());
  // A reply not framed as a document has no `n` (libbson's iterator refused it the same way).
  if (size < 5 || codec::le32(reply.data()) != size || reply[size - 1] != 0) return 0;
  codec::BsonElements it(reply.data(), size);
  return it.find("n") ? it.as_int64() : 0;
}

}  // namespace

IntrospectionLease::IntrospectionLease(std::string database, std::string holder)
    : database_(std::move(database)), holder_(std::move(holder)) {}

cluster::Expected<bool> IntrospectionLease::acquire(cluster::ClusterReader& reader,
                                                    std::chrono::milliseconds duration) {
  if (!ttl_index_asked_) {
    ttl_index_asked_ = true;
    Command index;
    bson_t indexes, spec, key;
    BSON_APPEND_UTF8(index.get(), "createIndexes", kLeaseCollection);
    BSON_APPEND_ARRAY_BEGIN(index.get(), "indexes", &indexes);
    BSON_APPEND_DOCUMENT_BEGIN(&indexes, "0", &spec);
    BSON_APPEND_DOCUMENT_BEGIN(&spec, "key", &key);
    BSON_APPEND_INT32(&key, "expiresAt", 1);
    bson_append_document_end(&spec, &key);
    BSON_APPEND_UTF8(&spec, "name", "expiresAt_ttl");
    BSON_APPEND_INT32(&spec, "expireAfterSeconds", 0);
    bson_append_document_end(&indexes, &spec);
    bson_append_array_end(index.get(), &indexes);
    // Only tidiness depends on it: the expiry is checked on every take-over.
    if (auto created = reader.write_on_primary(database_, index.bytes()); !created) {
      spdlog::debug("introspection lease: no TTL index on {}.{}: {}", database_, kLeaseCollection,
                    created.error().message);
    }
  }
  const int64_t now = now_ms();
  const int64_t expires = now + duration.count();
  // Renew it, or take it over once expired.
  Command update;
  bson_t updates, statement, q, any, mine, expired, lt, u, set;
  BSON_APPEND_UTF8(update.get(), "update", kLeaseCollection);
  BSON_APPEND_ARRAY_BEGIN(update.get(), "updates", &updates);
  BSON_APPEND_DOCUMENT_BEGIN(&updates, "0", &statement);
  BSON_APPEND_DOCUMENT_BEGIN(&statement, "q", &q);
  BSON_APPEND_UTF8(&q, "_id", kLeaseId);
  BSON_APPEND_ARRAY_BEGIN(&q, "$or", &any);
  BSON_APPEND_DOCUMENT_BEGIN(&any, "0", &mine);
  BSON_APPEND_UTF8(&mine, "holder", holder_.c_str());
  bson_append_document_end(&any, &mine);
  BSON_APPEND_DOCUMENT_BEGIN(&any, "1", &expired);
  BSON_APPEND_DOCUMENT_BEGIN(&expired, "expiresAt", &lt);
  BSON_APPEND_DATE_TIME(&lt, "$lt", now);
  bson_append_document_end(&expired, &lt);
  bson_append_document_end(&any, &expired);
  bson_append_array_end(&q, &any);
  bson_append_document_end(&statement, &q);
  BSON_APPEND_DOCUMENT_BEGIN(&statement, "u", &u);
  BSON_APPEND_DOCUMENT_BEGIN(&u, "$set", &set);
  BSON_APPEND_UTF8(&set, "holder", holder_.c_str());
  BSON_APPEND_DATE_TIME(&set, "expiresAt", expires);
  bson_append_document_end(&u, &set);
  bson_append_document_end(&statement, &u);
  bson_append_document_end(&updates, &statement);
  bson_append_array_end(update.get(), &updates);
  auto renewed = reader.write_on_primary(database_, update.bytes());
  if (!renewed) return renewed.error();
  if (affected(renewed.value()) > 0) return true;
  // No lease document, or another instance's that has not expired: inserting tells which.
  Command insert;
  bson_t documents, lease;
  BSON_APPEND_UTF8(insert.get(), "insert", kLeaseCollection);
  BSON_APPEND_ARRAY_BEGIN(insert.get(), "documents", &documents);
  BSON_APPEND_DOCUMENT_BEGIN(&documents, "0", &lease);
  BSON_APPEND_UTF8(&lease, "_id", kLeaseId);
  BSON_APPEND_UTF8(&lease, "holder", holder_.c_str());
  BSON_APPEND_DATE_TIME(&lease, "expiresAt", expires);
  bson_append_document_end(&documents, &lease);
  bson_append_array_end(insert.get(), &documents);
  auto inserted = reader.write_on_primary(database_, insert.bytes());
  if (!inserted) {
    if (codec::is(inserted.error().code, codec::ServerError::kDuplicateKey)) return false;
    return inserted.error();
  }
  return affected(inserted.value()) > 0;
}

cluster::Expected<void> IntrospectionLease::publish(
    cluster::ClusterReader& reader, const std::vector<advisor::SharedCollection>& facts,
    FactsPass pass) {
  for (size_t start = 0; start < facts.size(); start += kFactsPerCommand) {
    Command update;
    bson_t updates;
    BSON_APPEND_UTF8(update.get(), "update", kFactsCollection);
    BSON_APPEND_ARRAY_BEGIN(update.get(), "updates", &updates);
    const size_t end = std::min(facts.size(), start + kFactsPerCommand);
    for (size_t i = start; i < end; ++i) {
      const std::vector<uint8_t> doc = advisor::shared_collection_bson(facts[i]);
      bson_t replacement, statement, q;
      bson_init_static(&replacement, doc.data(), doc.size());
      BSON_APPEND_DOCUMENT_BEGIN(&updates, std::to_string(i - start).c_str(), &statement);
      BSON_APPEND_DOCUMENT_BEGIN(&statement, "q", &q);
      const std::string ns = facts[i].metadata.db + "." + facts[i].metadata.collection;
      BSON_APPEND_UTF8(&q, "_id", ns.c_str());
      bson_append_document_end(&statement, &q);
      BSON_APPEND_DOCUMENT(&statement, "u", &replacement);
      BSON_APPEND_BOOL(&statement, "upsert", true);
      bson_append_document_end(&updates, &statement);
    }
    bson_append_array_end(update.get(), &updates);
    if (auto written = reader.write_on_primary(database_, update.bytes()); !written) {
      return written.error();
    }
  }
  if (pass != FactsPass::kComplete) return {};
  // Collections gone since: their facts go too.
  Command remove;
  bson_t deletes, statement, q, id, names;
  BSON_APPEND_UTF8(remove.get(), "delete", kFactsCollection);
  BSON_APPEND_ARRAY_BEGIN(remove.get(), "deletes", &deletes);
  BSON_APPEND_DOCUMENT_BEGIN(&deletes, "0", &statement);
  BSON_APPEND_DOCUMENT_BEGIN(&statement, "q", &q);
  BSON_APPEND_DOCUMENT_BEGIN(&q, "_id", &id);
  BSON_APPEND_ARRAY_BEGIN(&id, "$nin", &names);
  for (size_t i = 0; i < facts.size(); ++i) {
    const std::string ns = facts[i].metadata.db + "." + facts[i].metadata.collection;
    BSON_APPEND_UTF8(&names, std::to_string(i).c_str(), ns.c_str());
  }
  bson_append_array_end(&id, &names);
  bson_append_document_end(&q, &id);
  bson_append_document_end(&statement, &q);
  BSON_APPEND_INT32(&statement, "limit", 0);
  bson_append_document_end(&deletes, &statement);
  bson_append_array_end(remove.get(), &deletes);
  if (auto removed = reader.write_on_primary(database_, remove.bytes()); !removed) {
    return removed.error();
  }
  return {};
}

cluster::Expected<std::vector<advisor::SharedCollection>> IntrospectionLease::load(
    cluster::ClusterReader& reader) {
  std::vector<advisor::SharedCollection> out;
  auto read = reader.read_documents(
      database_, kFactsCollection, 0, [&](const uint8_t* data, uint32_t size) {
        advisor::SharedCollection shared;
        if (auto read = advisor::read_shared_collection(data, size, &shared)) {
          out.push_back(std::move(shared));
        } else {
          spdlog::debug("introspection lease: a facts document was skipped: {}",
                        read.error().message);
        }
        return true;
      });
  if (!read) return read.error();
  return out;
}

std::string fleet_instance_id() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::random_device random;
  char suffix[17];
  std::snprintf(suffix, sizeof suffix, "%08x", random());
  return std::string(host) + "/" + std::to_string(getpid()) + "/" + suffix;
}

}  // namespace docguard::introspection
