/* libmongoc (Debian 1.23) through docguard: CRUD, insert_many, cursor over batches, aggregate,
 * a bulk operation, and each wire compressor via the URI.
 * Usage: mongoc_smoke mongodb://127.0.0.1:PORT     prints "N passed, M failed"; exit 1 on failure. */
#include <mongoc/mongoc.h>
#include <stdio.h>
#include <string.h>

static int passed, failed;

#define CHECK(cond, ...)                                     \
  do {                                                       \
    if (!(cond)) {                                           \
      fprintf(stderr, "  check failed: %s: ", #cond);        \
      fprintf(stderr, __VA_ARGS__);                          \
      fprintf(stderr, "\n");                                 \
      return 0;                                              \
    }                                                        \
  } while (0)

static mongoc_client_t *connect_uri(const char *uri_str) {
  bson_error_t err;
  mongoc_uri_t *uri = mongoc_uri_new_with_error(uri_str, &err);
  if (!uri) {
    fprintf(stderr, "bad uri %s: %s\n", uri_str, err.message);
    return NULL;
  }
  mongoc_uri_set_option_as_int32(uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS, 10000);
  mongoc_client_t *c = mongoc_client_new_from_uri(uri);
  mongoc_uri_destroy(uri);
  if (c) mongoc_client_set_error_api(c, MONGOC_ERROR_API_VERSION_2);
  return c;
}

static int64_t count(mongoc_collection_t *coll, const bson_t *filter) {
  bson_error_t err;
  bson_t empty = BSON_INITIALIZER;
  int64_t n = mongoc_collection_count_documents(coll, filter ? filter : &empty, NULL, NULL, NULL, &err);
  if (n < 0) fprintf(stderr, "  count: %s\n", err.message);
  return n;
}

static int test_crud(mongoc_collection_t *coll) {
  bson_error_t err;
  bson_t *doc = BCON_NEW("sku", "a1", "price", BCON_INT32(20));
  bool ok = mongoc_collection_insert_one(coll, doc, NULL, NULL, &err);
  bson_destroy(doc);
  CHECK(ok, "insert_one: %s", err.message);

  bson_t *sel = BCON_NEW("sku", "a1");
  bson_t *upd = BCON_NEW("$set", "{", "price", BCON_INT32(25), "}", "$push", "{", "tags", "sale", "}");
  bson_t reply;
  ok = mongoc_collection_update_one(coll, sel, upd, NULL, &reply, &err);
  bson_iter_t it;
  int32_t modified = -1;
  if (ok && bson_iter_init_find(&it, &reply, "modifiedCount")) modified = bson_iter_int32(&it);
  bson_destroy(&reply);
  bson_destroy(upd);
  CHECK(ok && modified == 1, "update_one: %s modified=%d", err.message, modified);

  mongoc_cursor_t *cur = mongoc_collection_find_with_opts(coll, sel, NULL, NULL);
  const bson_t *found;
  int32_t price = 0;
  if (mongoc_cursor_next(cur, &found) && bson_iter_init_find(&it, found, "price")) price = bson_iter_int32(&it);
  ok = !mongoc_cursor_error(cur, &err);
  mongoc_cursor_destroy(cur);
  CHECK(ok && price == 25, "find: %s price=%d", err.message, price);

  ok = mongoc_collection_delete_one(coll, sel, NULL, NULL, &err);
  bson_destroy(sel);
  CHECK(ok, "delete_one: %s", err.message);
  CHECK(count(coll, NULL) == 0, "collection not empty after delete");
  return 1;
}

static int insert_n(mongoc_collection_t *coll, int n) {
  bson_t **docs = bson_malloc(sizeof(bson_t *) * (size_t)n);
  for (int i = 0; i < n; i++) docs[i] = BCON_NEW("i", BCON_INT32(i), "payload", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
  bson_error_t err;
  bool ok = mongoc_collection_insert_many(coll, (const bson_t **)docs, (size_t)n, NULL, NULL, &err);
  if (!ok) fprintf(stderr, "  insert_many: %s\n", err.message);
  for (int i = 0; i < n; i++) bson_destroy(docs[i]);
  bson_free(docs);
  return ok;
}

static int test_insert_many(mongoc_collection_t *coll) {
  CHECK(insert_n(coll, 5000), "insert_many failed");
  CHECK(count(coll, NULL) == 5000, "count after insert_many");
  return 1;
}

static int test_cursor(mongoc_collection_t *coll) {
  CHECK(insert_n(coll, 2000), "insert failed");
  bson_t filter = BSON_INITIALIZER;
  bson_t *opts = BCON_NEW("batchSize", BCON_INT32(10), "sort", "{", "i", BCON_INT32(1), "}");
  mongoc_cursor_t *cur = mongoc_collection_find_with_opts(coll, &filter, opts, NULL);
  const bson_t *d;
  int expect = 0, in_order = 1;
  bson_iter_t it;
  while (mongoc_cursor_next(cur, &d)) {
    if (!bson_iter_init_find(&it, d, "i") || bson_iter_int32(&it) != expect) in_order = 0;
    expect++;
  }
  bson_error_t err;
  bool bad = mongoc_cursor_error(cur, &err);
  mongoc_cursor_destroy(cur);
  bson_destroy(opts);
  CHECK(!bad, "cursor: %s", err.message);
  CHECK(expect == 2000 && in_order, "got %d docs, in order=%d", expect, in_order);
  return 1;
}

static int test_aggregate(mongoc_collection_t *coll) {
  CHECK(insert_n(coll, 700), "insert failed");
  bson_t *pipeline = BCON_NEW("pipeline", "[",
                              "{", "$match", "{", "i", "{", "$gte", BCON_INT32(100), "}", "}", "}",
                              "{", "$group", "{", "_id", BCON_NULL, "total", "{", "$sum", "$i", "}", "}", "}",
                              "]");
  bson_t *opts = BCON_NEW("batchSize", BCON_INT32(1));
  mongoc_cursor_t *cur = mongoc_collection_aggregate(coll, MONGOC_QUERY_NONE, pipeline, opts, NULL);
  const bson_t *d;
  int64_t total = -1;
  bson_iter_t it;
  if (mongoc_cursor_next(cur, &d) && bson_iter_init_find(&it, d, "total")) total = bson_iter_as_int64(&it);
  bson_error_t err;
  bool bad = mongoc_cursor_error(cur, &err);
  mongoc_cursor_destroy(cur);
  bson_destroy(pipeline);
  bson_destroy(opts);
  CHECK(!bad, "aggregate: %s", err.message);
  int64_t want = 0;
  for (int i = 100; i < 700; i++) want += i;
  CHECK(total == want, "total=%lld want %lld", (long long)total, (long long)want);
  return 1;
}

static int test_bulk(mongoc_collection_t *coll, bool ordered) {
  bson_t *opts = BCON_NEW("ordered", BCON_BOOL(ordered));
  mongoc_bulk_operation_t *bulk = mongoc_collection_create_bulk_operation_with_opts(coll, opts);
  bson_destroy(opts);
  for (int i = 0; i < 10; i++) {
    bson_t *d = BCON_NEW("_id", BCON_INT32(i), "v", BCON_INT32(0));
    mongoc_bulk_operation_insert(bulk, d);
    bson_destroy(d);
  }
  bson_t *s1 = BCON_NEW("_id", BCON_INT32(1)), *u1 = BCON_NEW("$set", "{", "v", BCON_INT32(5), "}");
  mongoc_bulk_operation_update_one(bulk, s1, u1, false);
  bson_t *s2 = BCON_NEW("_id", "{", "$gte", BCON_INT32(5), "}"), *u2 = BCON_NEW("$inc", "{", "v", BCON_INT32(2), "}");
  mongoc_bulk_operation_update_many_with_opts(bulk, s2, u2, NULL, NULL);
  bson_t *s3 = BCON_NEW("_id", BCON_INT32(3));
  mongoc_bulk_operation_remove_one(bulk, s3);
  bson_t reply;
  bson_error_t err;
  uint32_t ok = mongoc_bulk_operation_execute(bulk, &reply, &err);
  bson_iter_t it;
  int32_t n_ins = -1, n_mod = -1, n_rem = -1;
  if (bson_iter_init_find(&it, &reply, "nInserted")) n_ins = bson_iter_int32(&it);
  if (bson_iter_init_find(&it, &reply, "nModified")) n_mod = bson_iter_int32(&it);
  if (bson_iter_init_find(&it, &reply, "nRemoved")) n_rem = bson_iter_int32(&it);
  bson_destroy(&reply);
  mongoc_bulk_operation_destroy(bulk);
  bson_destroy(s1); bson_destroy(u1); bson_destroy(s2); bson_destroy(u2); bson_destroy(s3);
  CHECK(ok, "bulk: %s", err.message);
  CHECK(n_ins == 10 && n_mod == 6 && n_rem == 1, "nInserted=%d nModified=%d nRemoved=%d", n_ins, n_mod, n_rem);
  CHECK(count(coll, NULL) == 9, "count after bulk");
  return 1;
}

static int test_bulk_ordered(mongoc_collection_t *c) { return test_bulk(c, true); }
static int test_bulk_unordered(mongoc_collection_t *c) { return test_bulk(c, false); }

static void run(mongoc_client_t *client, const char *name, int (*fn)(mongoc_collection_t *)) {
  char dbname[64];
  snprintf(dbname, sizeof dbname, "it_c_%d", (int)getpid());
  mongoc_collection_t *coll = mongoc_client_get_collection(client, dbname, name);
  bson_error_t err;
  mongoc_collection_drop(coll, &err);
  int ok = fn(coll);
  mongoc_collection_drop(coll, &err);
  mongoc_collection_destroy(coll);
  printf("%s %s\n", ok ? "PASS" : "FAIL", name);
  if (ok) passed++; else failed++;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s mongodb://HOST:PORT\n", argv[0]);
    return 2;
  }
  const char *base = argv[1];
  mongoc_init();
  const char *compressors[] = {NULL, "snappy", "zlib", "zstd"};
  for (size_t k = 0; k < sizeof compressors / sizeof *compressors; k++) {
    char uri[512];
    const char *sep = strchr(base, '?') ? "&" : (strchr(base + strlen("mongodb://"), '/') ? "?" : "/?");
    if (compressors[k])
      snprintf(uri, sizeof uri, "%s%scompressors=%s", base, sep, compressors[k]);
    else
      snprintf(uri, sizeof uri, "%s", base);
    printf("-- %s\n", uri);
    mongoc_client_t *client = connect_uri(uri);
    if (!client) {
      failed++;
      continue;
    }
    if (!compressors[k]) {
      run(client, "crud", test_crud);
      run(client, "insert_many", test_insert_many);
      run(client, "cursor", test_cursor);
      run(client, "aggregate", test_aggregate);
      run(client, "bulk_ordered", test_bulk_ordered);
      run(client, "bulk_unordered", test_bulk_unordered);
    } else {
      char name[64];
      snprintf(name, sizeof name, "crud_%s", compressors[k]);
      run(client, name, test_crud);
      snprintf(name, sizeof name, "cursor_%s", compressors[k]);
      run(client, name, test_cursor);
    }
    char dbname[64];
    snprintf(dbname, sizeof dbname, "it_c_%d", (int)getpid());
    mongoc_database_t *db = mongoc_client_get_database(client, dbname);
    bson_error_t err;
    mongoc_database_drop(db, &err);
    mongoc_database_destroy(db);
    mongoc_client_destroy(client);
  }
  mongoc_cleanup();
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
