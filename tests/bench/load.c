/* Load generator for docguard benchmarks, using libmongoc 1.23 (a real driver).
 *
 *   load -u URI [-m mix|big] [-t THREADS] [-c CONNECTIONS] [-d SECONDS] [-n OPS] [-b BYTES] [-P PID,...]
 *     URI is any libmongoc connection string; a Unix domain socket is its path URL-encoded as
 *     the host (mongodb://%2Ftmp%2Fdocguard.sock/, the path ending in .sock).
 *     mix: 50% insert of a ~200-byte document with a small array, 50% find by _id (alternating)
 *     big: inserts of one document of BYTES (-b, default 1 MiB) held in a binary field
 *     THREADS threads share a client pool of CONNECTIONS clients (default: one per thread);
 *     with more connections than threads each thread round-robins over its own clients.
 *     Runs for SECONDS (default 5) or until OPS operations (whichever first), after a warm-up
 *     operation on every connection. With -P, reads utime+stime of those processes from
 *     /proc/PID/stat at the start and end of the measured window and their VmRSS at the end.
 *     Prints one line: key=value pairs (ops, secs, ops_per_s, p50_us, p99_us, errors,
 *     cpu_us_per_op, rss_kib, sys_us_per_op: the kernel part of cpu_us_per_op).
 *
 *   load -m idle -h HOST -p PORT -k K [-s SECONDS] [-P PID]
 *   load -m idle -h /PATH.sock -k K [-s SECONDS] [-P PID]
 *     opens K raw connections (TCP to HOST:PORT, or to the Unix domain socket at PATH when -h
 *     is an absolute path), sends an OP_MSG hello on each and reads the reply, then holds them
 *     idle for SECONDS (default 10); prints the number held and, with -P, the RSS of the
 *     process before and while they are held. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <mongoc/mongoc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* ---- latency histogram: exact below 1024 us, then 512 sub-buckets per power of two ---- */
#define NBUCKETS (1024 + 22 * 512)
static int bucket_of(uint64_t us) {
  if (us < 1024) return (int)us;
  int e = 63 - __builtin_clzll(us);
  if (e > 31) return NBUCKETS - 1;
  return 1024 + (e - 10) * 512 + (int)((us >> (e - 9)) - 512);
}
static double bucket_value(int idx) {
  if (idx < 1024) return idx;
  int e = 10 + (idx - 1024) / 512;
  uint64_t m = 512 + (uint64_t)((idx - 1024) % 512);
  return (double)(m << (e - 9)) + (double)(1ull << (e - 9)) / 2.0;
}

static uint64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- /proc sampling ---- */
#define MAXPIDS 8
static int pids[MAXPIDS];
static int npids;
/* User and system CPU seconds of one process; `sys_out` (may be NULL) gets the system part. */
static double cpu_seconds_split(int pid, double* sys_out) {
  char path[64], buf[2048];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  char* p = strrchr(buf, ')');
  if (!p) return 0;
  unsigned long utime = 0, stime = 0;
  /* fields after ')': state(3) ... utime(14) stime(15) */
  int field = 2;
  for (char* s = p + 1; *s && field < 15; s++) {
    if (*s == ' ') {
      field++;
      if (field == 14) utime = strtoul(s + 1, NULL, 10);
      if (field == 15) stime = strtoul(s + 1, NULL, 10);
    }
  }
  const double tck = (double)sysconf(_SC_CLK_TCK);
  if (sys_out) *sys_out += (double)stime / tck;
  return (double)(utime + stime) / tck;
}
static long rss_kib(int pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", pid);
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  long kb = 0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0) kb = strtol(line + 6, NULL, 10);
  fclose(f);
  return kb;
}
/* Total CPU seconds of the sampled processes; *sys gets their system (kernel) part. */
static double cpu_all(double* sys) {
  double s = 0;
  *sys = 0;
  for (int i = 0; i < npids; i++) s += cpu_seconds_split(pids[i], sys);
  return s;
}
static long rss_all(void) {
  long s = 0;
  for (int i = 0; i < npids; i++) s += rss_kib(pids[i]);
  return s;
}

/* ---- driver load ---- */
typedef struct {
  int index;
  int nclients;
  mongoc_client_t** clients;
  uint32_t* hist;
  uint64_t ops, errors, max_ops;
  char first_error[512];
} worker_t;

static mongoc_client_pool_t* pool;
static const char* mode = "mix";
static size_t big_bytes = 1u << 20; /* -b: document size of the big mode */
static atomic_int started_count;
static atomic_int go_flag;
static atomic_int stop_flag;
static atomic_ullong total_ops;
static pthread_mutex_t pop_mutex = PTHREAD_MUTEX_INITIALIZER;

/* A ~200-byte product document, the same shape as tests/bench/bench_messages.h small_doc. */
static bson_t* make_small_doc(int32_t i) {
  bson_t* d = bson_new();
  bson_oid_t oid;
  bson_oid_init(&oid, NULL);
  BSON_APPEND_OID(d, "_id", &oid);
  BSON_APPEND_INT32(d, "seq", i);
  BSON_APPEND_UTF8(d, "name", "widget-standard-edition");
  BSON_APPEND_DOUBLE(d, "price", 19.99);
  BSON_APPEND_INT32(d, "qty", 42);
  bson_t arr, sub;
  BSON_APPEND_ARRAY_BEGIN(d, "tags", &arr);
  BSON_APPEND_UTF8(&arr, "0", "blue");
  BSON_APPEND_UTF8(&arr, "1", "small");
  BSON_APPEND_UTF8(&arr, "2", "sale");
  bson_append_array_end(d, &arr);
  BSON_APPEND_DOCUMENT_BEGIN(d, "dims", &sub);
  BSON_APPEND_DOUBLE(&sub, "w", 1.5);
  BSON_APPEND_DOUBLE(&sub, "h", 2.5);
  bson_append_document_end(d, &sub);
  BSON_APPEND_UTF8(d, "descr", "a plain benchmark document of about two hundred bytes");
  return d;
}
static bson_t* make_big_doc(void) {
  bson_t* d = bson_new();
  bson_oid_t oid;
  bson_oid_init(&oid, NULL);
  BSON_APPEND_OID(d, "_id", &oid);
  size_t n = big_bytes > 128 ? big_bytes - 64 : 64;
  uint8_t* blob = malloc(n);
  memset(blob, 0xab, n);
  BSON_APPEND_BINARY(d, "blob", BSON_SUBTYPE_BINARY, blob, (uint32_t)n);
  free(blob);
  return d;
}
/* _id is the first element: 4-byte length, type byte, "_id\0", then 12 bytes of ObjectId. */
static void new_id(bson_t* d, bson_oid_t* out) {
  bson_oid_init(out, NULL);
  memcpy((uint8_t*)bson_get_data(d) + 9, out->bytes, 12);
}

static void note_error(worker_t* w, const bson_error_t* e) {
  if (w->errors++ == 0) snprintf(w->first_error, sizeof w->first_error, "%s", e->message);
}

static int one_op(worker_t* w, mongoc_collection_t* coll, bson_t* doc, int insert,
                  bson_oid_t* last_id) {
  bson_error_t err;
  if (insert) {
    new_id(doc, last_id);
    if (!mongoc_collection_insert_one(coll, doc, NULL, NULL, &err)) {
      note_error(w, &err);
      return 0;
    }
    return 1;
  }
  bson_t filter, opts;
  bson_init(&filter);
  BSON_APPEND_OID(&filter, "_id", last_id);
  bson_init(&opts);
  BSON_APPEND_INT64(&opts, "limit", 1);
  mongoc_cursor_t* cur = mongoc_collection_find_with_opts(coll, &filter, &opts, NULL);
  const bson_t* out;
  int found = 0;
  while (mongoc_cursor_next(cur, &out)) found++;
  int ok = 1;
  if (mongoc_cursor_error(cur, &err)) {
    note_error(w, &err);
    ok = 0;
  }
  mongoc_cursor_destroy(cur);
  bson_destroy(&filter);
  bson_destroy(&opts);
  return ok;
}

static void* worker_main(void* arg) {
  worker_t* w = arg;
  const int big = strcmp(mode, "big") == 0;
  mongoc_collection_t** colls = calloc((size_t)w->nclients, sizeof *colls);
  pthread_mutex_lock(&pop_mutex);
  for (int i = 0; i < w->nclients; i++) w->clients[i] = mongoc_client_pool_pop(pool);
  pthread_mutex_unlock(&pop_mutex);
  for (int i = 0; i < w->nclients; i++)
    colls[i] = mongoc_client_get_collection(w->clients[i], "bench", "items");
  bson_t* doc = big ? make_big_doc() : make_small_doc(w->index);
  bson_oid_t last_id;
  bson_oid_init(&last_id, NULL);
  /* Warm-up: one insert on every connection (connects and handshakes). */
  for (int i = 0; i < w->nclients; i++) one_op(w, colls[i], doc, 1, &last_id);
  w->errors = 0;
  atomic_fetch_add(&started_count, 1);
  while (!atomic_load(&go_flag)) usleep(1000);
  uint64_t k = 0;
  while (!atomic_load_explicit(&stop_flag, memory_order_relaxed) && w->ops < w->max_ops) {
    const int insert = big || (k & 1) == 0;
    mongoc_collection_t* c = colls[(k >> (big ? 0 : 1)) % (uint64_t)w->nclients];
    uint64_t t0 = now_us();
    int ok = one_op(w, c, doc, insert, &last_id);
    uint64_t t1 = now_us();
    k++;
    if (atomic_load_explicit(&stop_flag, memory_order_relaxed)) break;
    if (ok) {
      w->hist[bucket_of(t1 - t0)]++;
      w->ops++;
      atomic_fetch_add_explicit(&total_ops, 1, memory_order_relaxed);
    }
  }
  bson_destroy(doc);
  for (int i = 0; i < w->nclients; i++) mongoc_collection_destroy(colls[i]);
  free(colls);
  return NULL;
}

static void quiet_log(mongoc_log_level_t level, const char* domain, const char* message, void* data) {
  (void)data;
  if (level <= MONGOC_LOG_LEVEL_WARNING) fprintf(stderr, "load: mongoc %s: %s\n", domain, message);
}

static int run_driver(const char* uri_str, int threads, int conns, double secs, uint64_t max_ops) {
  mongoc_init();
  mongoc_log_set_handler(quiet_log, NULL);
  /* libmongoc's counters file (/dev/shm/mongoc-<pid>) goes only with an orderly exit, which
   * _exit below skips: its name goes now, so no run leaves one for a later process's pid. */
  char shm_name[32];
  snprintf(shm_name, sizeof shm_name, "/mongoc-%d", (int)getpid());
  shm_unlink(shm_name);
  bson_error_t err;
  mongoc_uri_t* uri = mongoc_uri_new_with_error(uri_str, &err);
  if (!uri) {
    fprintf(stderr, "load: bad URI: %s\n", err.message);
    return 2;
  }
  mongoc_uri_set_option_as_int32(uri, MONGOC_URI_MAXPOOLSIZE, conns);
  mongoc_uri_set_option_as_int32(uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS, 5000);
  mongoc_uri_set_option_as_int32(uri, MONGOC_URI_SOCKETTIMEOUTMS, 60000);
  pool = mongoc_client_pool_new(uri);
  mongoc_client_pool_set_error_api(pool, MONGOC_ERROR_API_VERSION_2);
  worker_t* ws = calloc((size_t)threads, sizeof *ws);
  pthread_t* ts = calloc((size_t)threads, sizeof *ts);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 512 * 1024);
  for (int i = 0; i < threads; i++) {
    ws[i].index = i;
    ws[i].nclients = conns / threads + (i < conns % threads ? 1 : 0);
    ws[i].clients = calloc((size_t)ws[i].nclients, sizeof(mongoc_client_t*));
    ws[i].hist = calloc(NBUCKETS, sizeof(uint32_t));
    ws[i].max_ops = max_ops / (uint64_t)threads + 1;
    if (pthread_create(&ts[i], &attr, worker_main, &ws[i]) != 0) {
      fprintf(stderr, "load: pthread_create failed at thread %d\n", i);
      return 2;
    }
  }
  uint64_t wait_start = now_us();
  while (atomic_load(&started_count) < threads) {
    if (now_us() - wait_start > 120u * 1000000u) {
      fprintf(stderr, "load: warm-up did not finish (%d/%d threads)\n", atomic_load(&started_count), threads);
      _exit(3);
    }
    usleep(2000);
  }
  double sys0 = 0, sys1 = 0;
  double cpu0 = cpu_all(&sys0);
  uint64_t t0 = now_us();
  atomic_store(&go_flag, 1);
  uint64_t deadline = t0 + (uint64_t)(secs * 1e6);
  while (now_us() < deadline && atomic_load_explicit(&total_ops, memory_order_relaxed) < max_ops)
    usleep(2000);
  atomic_store(&stop_flag, 1);
  uint64_t t1 = now_us();
  double cpu1 = cpu_all(&sys1);
  long rss = rss_all();
  for (int i = 0; i < threads; i++) pthread_join(ts[i], NULL);

  uint64_t ops = 0, errors = 0;
  static uint64_t hist[NBUCKETS];
  const char* first_error = "";
  for (int i = 0; i < threads; i++) {
    ops += ws[i].ops;
    errors += ws[i].errors;
    if (ws[i].errors && !*first_error) first_error = ws[i].first_error;
    for (int b = 0; b < NBUCKETS; b++) hist[b] += ws[i].hist[b];
  }
  double p50 = 0, p99 = 0;
  uint64_t acc = 0;
  int have50 = 0;
  for (int b = 0; b < NBUCKETS && ops; b++) {
    acc += hist[b];
    if (!have50 && acc * 2 >= ops) { p50 = bucket_value(b); have50 = 1; }
    if (acc * 100 >= ops * 99) { p99 = bucket_value(b); break; }
  }
  double el = (double)(t1 - t0) / 1e6;
  printf("ops=%llu secs=%.3f ops_per_s=%.0f p50_us=%.0f p99_us=%.0f errors=%llu",
         (unsigned long long)ops, el, ops / el, p50, p99, (unsigned long long)errors);
  if (npids)
    printf(" cpu_us_per_op=%.2f cpu_s=%.3f rss_kib=%ld sys_us_per_op=%.2f",
           ops ? (cpu1 - cpu0) * 1e6 / (double)ops : 0, cpu1 - cpu0, rss,
           ops ? (sys1 - sys0) * 1e6 / (double)ops : 0);
  printf("\n");
  if (errors) fprintf(stderr, "load: first error: %s\n", first_error);
  fflush(stdout);
  fflush(stderr);
  /* Skip the orderly teardown (endSessions on every pooled client): it only costs time. */
  _exit(0);
  for (int i = 0; i < threads; i++) {
    for (int c = 0; c < ws[i].nclients; c++) mongoc_client_pool_push(pool, ws[i].clients[c]);
    free(ws[i].clients);
    free(ws[i].hist);
  }
  mongoc_client_pool_destroy(pool);
  mongoc_uri_destroy(uri);
  mongoc_cleanup();
  return 0;
}

/* ---- idle connections ---- */
static int read_full(int fd, uint8_t* p, size_t n) {
  while (n) {
    ssize_t r = recv(fd, p, n, 0);
    if (r <= 0) {
      if (r < 0 && errno == EINTR) continue;
      return -1;
    }
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

static int run_idle(const char* host, int port, int k, double hold) {
  bson_t hello = BSON_INITIALIZER;
  BSON_APPEND_INT32(&hello, "hello", 1);
  BSON_APPEND_UTF8(&hello, "$db", "admin");
  uint8_t msg[256];
  int32_t len = 16 + 4 + 1 + (int32_t)hello.len;
  memset(msg, 0, sizeof msg);
  memcpy(msg, &len, 4);
  int32_t op = 2013;
  memcpy(msg + 12, &op, 4);
  memcpy(msg + 21, bson_get_data(&hello), hello.len);
  int* fds = calloc((size_t)k, sizeof(int));
  struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  struct sockaddr_un un = {.sun_family = AF_UNIX};
  const struct sockaddr* a = (const struct sockaddr*)&in;
  socklen_t alen = sizeof in;
  int family = AF_INET;
  if (host[0] == '/') { /* a Unix domain socket's path */
    if (strlen(host) >= sizeof un.sun_path) {
      fprintf(stderr, "load idle: socket path too long: %s\n", host);
      free(fds);
      return 2;
    }
    strcpy(un.sun_path, host);
    a = (const struct sockaddr*)&un;
    alen = sizeof un;
    family = AF_UNIX;
  } else if (inet_pton(AF_INET, host, &in.sin_addr) != 1) {
    fprintf(stderr, "load idle: not an IPv4 address or a socket path: %s\n", host);
    free(fds);
    return 2;
  }
  long rss_before = rss_all();
  uint64_t t0 = now_us();
  int held = 0, failed = 0;
  const int batch = 200; /* connect and handshake in batches */
  uint8_t* reply = malloc(1 << 20);
  for (int base = 0; base < k; base += batch) {
    int end = base + batch < k ? base + batch : k;
    for (int i = base; i < end; i++) {
      fds[i] = socket(family, SOCK_STREAM, 0);
      if (fds[i] < 0 || connect(fds[i], a, alen) < 0) {
        if (failed++ == 0) perror("load idle: connect");
        if (fds[i] >= 0) close(fds[i]);
        fds[i] = -1;
        continue;
      }
      int32_t id = i + 1;
      memcpy(msg + 4, &id, 4);
      if (send(fds[i], msg, (size_t)len, MSG_NOSIGNAL) != len) { close(fds[i]); fds[i] = -1; failed++; }
    }
    for (int i = base; i < end; i++) {
      if (fds[i] < 0) continue;
      struct timeval tv = {10, 0};
      setsockopt(fds[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      uint8_t h[16];
      int32_t rl = 0;
      if (read_full(fds[i], h, 16) == 0) memcpy(&rl, h, 4);
      if (rl < 16 || rl > (1 << 20) || read_full(fds[i], reply, (size_t)rl - 16) != 0) {
        if (failed++ == 0) fprintf(stderr, "load idle: no hello reply on connection %d\n", i);
        close(fds[i]);
        fds[i] = -1;
        continue;
      }
      held++;
    }
  }
  double setup = (double)(now_us() - t0) / 1e6;
  usleep(500 * 1000);
  long rss_held = rss_all();
  printf("idle_connections=%d failed=%d setup_s=%.2f rss_before_kib=%ld rss_held_kib=%ld bytes_per_conn=%.0f\n",
         held, failed, setup, rss_before, rss_held,
         held ? (double)(rss_held - rss_before) * 1024.0 / held : 0);
  fflush(stdout);
  usleep((useconds_t)(hold * 1e6));
  for (int i = 0; i < k; i++)
    if (fds[i] >= 0) close(fds[i]);
  free(fds);
  free(reply);
  return failed ? 1 : 0;
}

int main(int argc, char** argv) {
  const char* uri = NULL;
  const char* host = "127.0.0.1";
  int port = 0, threads = 16, conns = 0, k = 1000, opt;
  double secs = 5, hold = 10;
  uint64_t max_ops = UINT64_MAX / 2;
  while ((opt = getopt(argc, argv, "u:m:t:c:d:n:P:h:p:k:s:b:")) != -1) {
    switch (opt) {
      case 'u': uri = optarg; break;
      case 'm': mode = optarg; break;
      case 't': threads = atoi(optarg); break;
      case 'c': conns = atoi(optarg); break;
      case 'd': secs = atof(optarg); break;
      case 'n': max_ops = strtoull(optarg, NULL, 10); break;
      case 'b': big_bytes = strtoull(optarg, NULL, 10); break;
      case 'P': {
        char* s = optarg;
        while (*s && npids < MAXPIDS) {
          pids[npids++] = (int)strtol(s, &s, 10);
          if (*s == ',') s++;
        }
        break;
      }
      case 'h': host = optarg; break;
      case 'p': port = atoi(optarg); break;
      case 'k': k = atoi(optarg); break;
      case 's': hold = atof(optarg); break;
      default: fprintf(stderr, "see the comment at the top of tests/bench/load.c\n"); return 2;
    }
  }
  if (secs > 600) secs = 600;
  if (hold > 600) hold = 600;
  if (strcmp(mode, "idle") == 0) return run_idle(host, port, k, hold);
  if (!uri) { fprintf(stderr, "load: -u URI required\n"); return 2; }
  if (threads < 1) threads = 1;
  if (conns < threads) conns = threads;
  return run_driver(uri, threads, conns, secs, max_ops);
}
