/* libmongoc (pooled, background monitoring) against a cluster URI, driven line by line on stdin:
 *   primary  -> "ok HOST:PORT" of the server selected for writes, or "err MESSAGE"
 *   insert   -> "ok" or "err CODE MESSAGE" after one insert_one into cl_mongoc.c (retryable)
 * Used by test_double_direct.py::test_libmongoc_follows to show libmongoc accepts the double. */
#include <mongoc/mongoc.h>
#include <stdio.h>
#include <string.h>

/* libmongoc's default handler logs to stdout, which carries the answers here. */
static void log_to_stderr(mongoc_log_level_t level, const char *domain, const char *message,
                          void *unused) {
  (void)unused;
  fprintf(stderr, "%s %s: %s\n", mongoc_log_level_str(level), domain, message);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: mongoc_follow URI\n");
    return 2;
  }
  mongoc_log_set_handler(log_to_stderr, NULL);
  mongoc_init();
  bson_error_t err;
  mongoc_uri_t *uri = mongoc_uri_new_with_error(argv[1], &err);
  mongoc_client_pool_t *pool = uri ? mongoc_client_pool_new(uri) : NULL;
  if (!pool) {
    printf("err %s\n", uri ? "no pool" : err.message);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  char line[256];
  while (fgets(line, sizeof line, stdin)) {
    mongoc_client_t *client = mongoc_client_pool_pop(pool);
    if (strncmp(line, "primary", 7) == 0) {
      mongoc_server_description_t *sd = mongoc_client_select_server(client, true, NULL, &err);
      if (sd) {
        printf("ok %s\n", mongoc_server_description_host(sd)->host_and_port);
        mongoc_server_description_destroy(sd);
      } else {
        printf("err %s\n", err.message);
      }
    } else if (strncmp(line, "insert", 6) == 0) {
      mongoc_collection_t *coll = mongoc_client_get_collection(client, "cl_mongoc", "c");
      bson_t *doc = BCON_NEW("from", "libmongoc");
      if (mongoc_collection_insert_one(coll, doc, NULL, NULL, &err))
        printf("ok\n");
      else
        printf("err %u %s\n", err.code, err.message);
      bson_destroy(doc);
      mongoc_collection_destroy(coll);
    } else {
      printf("err unknown command\n");
    }
    mongoc_client_pool_push(pool, client);
  }
  mongoc_client_pool_destroy(pool);
  mongoc_uri_destroy(uri);
  mongoc_cleanup();
  return 0;
}
