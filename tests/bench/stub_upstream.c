/* A minimal MongoDB-speaking server for benchmarks: answers instantly so that the proxy in front
 * of it is what is measured. epoll, non-blocking sockets, one thread per -t (default 1), all
 * sharing one listener (EPOLLEXCLUSIVE). Understands:
 *   OP_QUERY hello/isMaster (legacy handshake) -> OP_REPLY
 *   OP_MSG hello/isMaster, insert ({n, ok:1}), find (one small document echoing the filter's
 *   _id, cursor id 0), getMore (empty batch, id 0), anything else -> {ok: 1}.
 * moreToCome requests get no reply. No compression, no auth.
 * Usage: stub_upstream [-l 127.0.0.1] -p PORT [-t THREADS] */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <bson/bson.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

enum { OP_REPLY = 1, OP_QUERY = 2004, OP_MSG = 2013 };

typedef struct {
  uint8_t* data;
  size_t len, cap;
} buf_t;

typedef struct {
  int fd;
  buf_t in, out;
  size_t out_off;
  int want_out;
} conn_t;

static int listen_fd = -1;
static volatile int32_t next_id = 1;
static volatile int32_t next_conn_id = 1;

static int32_t le32(const uint8_t* p) {
  return (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                   ((uint32_t)p[3] << 24));
}
static void put32(uint8_t* p, int32_t v) {
  uint32_t u = (uint32_t)v;
  p[0] = (uint8_t)u; p[1] = (uint8_t)(u >> 8); p[2] = (uint8_t)(u >> 16); p[3] = (uint8_t)(u >> 24);
}
static void reserve(buf_t* b, size_t extra) {
  if (b->len + extra <= b->cap) return;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->len + extra) cap *= 2;
  b->data = realloc(b->data, cap);
  if (!b->data) abort();
  b->cap = cap;
}
static void append(buf_t* b, const void* p, size_t n) {
  reserve(b, n);
  memcpy(b->data + b->len, p, n);
  b->len += n;
}

static void hello_reply(bson_t* r, int is_hello) {
  BSON_APPEND_BOOL(r, "helloOk", true);
  BSON_APPEND_BOOL(r, is_hello ? "isWritablePrimary" : "ismaster", true);
  BSON_APPEND_INT32(r, "maxBsonObjectSize", 16 * 1024 * 1024);
  BSON_APPEND_INT32(r, "maxMessageSizeBytes", 48000000);
  BSON_APPEND_INT32(r, "maxWriteBatchSize", 100000);
  BSON_APPEND_DATE_TIME(r, "localTime", (int64_t)time(NULL) * 1000);
  BSON_APPEND_INT32(r, "logicalSessionTimeoutMinutes", 30);
  BSON_APPEND_INT32(r, "connectionId", __sync_fetch_and_add(&next_conn_id, 1));
  BSON_APPEND_INT32(r, "minWireVersion", 0);
  BSON_APPEND_INT32(r, "maxWireVersion", 17);
  BSON_APPEND_BOOL(r, "readOnly", false);
  BSON_APPEND_DOUBLE(r, "ok", 1.0);
}

static int is_hello_name(const char* k) {
  return strcmp(k, "hello") == 0 || strcmp(k, "isMaster") == 0 || strcmp(k, "ismaster") == 0;
}

static void emit_msg(conn_t* c, int32_t response_to, const bson_t* doc) {
  uint8_t h[21];
  int32_t len = 16 + 4 + 1 + (int32_t)doc->len;
  put32(h, len);
  put32(h + 4, __sync_fetch_and_add(&next_id, 1));
  put32(h + 8, response_to);
  put32(h + 12, OP_MSG);
  put32(h + 16, 0);
  h[20] = 0;
  append(&c->out, h, sizeof h);
  append(&c->out, bson_get_data(doc), doc->len);
}

static void emit_reply(conn_t* c, int32_t response_to, const bson_t* doc) {
  uint8_t h[36];
  int32_t len = 36 + (int32_t)doc->len;
  memset(h, 0, sizeof h);
  put32(h, len);
  put32(h + 4, __sync_fetch_and_add(&next_id, 1));
  put32(h + 8, response_to);
  put32(h + 12, OP_REPLY);
  put32(h + 32, 1); /* numberReturned */
  append(&c->out, h, sizeof h);
  append(&c->out, bson_get_data(doc), doc->len);
}

static void handle_msg(conn_t* c, const uint8_t* m, int32_t len, int32_t request_id) {
  uint32_t flags = (uint32_t)le32(m + 16);
  const uint8_t* p = m + 20;
  const uint8_t* end = m + len - ((flags & 1u) ? 4 : 0);
  bson_t body;
  int have_body = 0;
  int32_t seq_docs = -1;
  while (p < end) {
    uint8_t kind = *p++;
    if (kind == 0) {
      int32_t blen = le32(p);
      if (blen < 5 || p + blen > end || !bson_init_static(&body, p, (size_t)blen)) return;
      have_body = 1;
      p += blen;
    } else if (kind == 1) {
      int32_t slen = le32(p);
      const uint8_t* s = p + 4;
      const uint8_t* send = p + slen;
      if (slen < 5 || send > end) return;
      s += strnlen((const char*)s, (size_t)(send - s)) + 1;
      seq_docs = 0;
      while (s + 4 <= send) {
        int32_t dl = le32(s);
        if (dl < 5) break;
        s += dl;
        seq_docs++;
      }
      p = send;
    } else {
      return;
    }
  }
  if (!have_body) return;
  if (flags & 2u) return; /* moreToCome: no reply */
  bson_iter_t it;
  if (!bson_iter_init(&it, &body) || !bson_iter_next(&it)) return;
  const char* cmd = bson_iter_key(&it);
  const char* coll = BSON_ITER_HOLDS_UTF8(&it) ? bson_iter_utf8(&it, NULL) : "x";
  bson_t r;
  bson_init(&r);
  if (is_hello_name(cmd)) {
    hello_reply(&r, strcmp(cmd, "hello") == 0);
  } else if (strcmp(cmd, "insert") == 0) {
    int32_t n = seq_docs;
    if (n < 0) {
      bson_iter_t d;
      n = 0;
      if (bson_iter_init_find(&d, &body, "documents") && BSON_ITER_HOLDS_ARRAY(&d)) {
        bson_iter_t e;
        if (bson_iter_recurse(&d, &e))
          while (bson_iter_next(&e)) n++;
      }
    }
    BSON_APPEND_INT32(&r, "n", n);
    BSON_APPEND_DOUBLE(&r, "ok", 1.0);
  } else if (strcmp(cmd, "find") == 0 || strcmp(cmd, "getMore") == 0) {
    int find = strcmp(cmd, "find") == 0;
    char ns[256];
    const char* db = "test";
    bson_iter_t d;
    if (bson_iter_init_find(&d, &body, "$db") && BSON_ITER_HOLDS_UTF8(&d)) db = bson_iter_utf8(&d, NULL);
    if (!find) {
      bson_iter_t cl;
      coll = "x";
      if (bson_iter_init_find(&cl, &body, "collection") && BSON_ITER_HOLDS_UTF8(&cl))
        coll = bson_iter_utf8(&cl, NULL);
    }
    snprintf(ns, sizeof ns, "%s.%s", db, coll);
    bson_t cur, batch, doc;
    BSON_APPEND_DOCUMENT_BEGIN(&r, "cursor", &cur);
    BSON_APPEND_ARRAY_BEGIN(&cur, find ? "firstBatch" : "nextBatch", &batch);
    if (find) {
      BSON_APPEND_DOCUMENT_BEGIN(&batch, "0", &doc);
      bson_iter_t f;
      int have_id = 0;
      if (bson_iter_init_find(&f, &body, "filter") && BSON_ITER_HOLDS_DOCUMENT(&f)) {
        bson_iter_t id;
        if (bson_iter_recurse(&f, &id) && bson_iter_find(&id, "_id")) {
          bson_append_iter(&doc, "_id", 3, &id);
          have_id = 1;
        }
      }
      if (!have_id) BSON_APPEND_INT32(&doc, "_id", 1);
      BSON_APPEND_UTF8(&doc, "name", "widget-standard-edition");
      BSON_APPEND_INT32(&doc, "qty", 42);
      bson_t tags;
      BSON_APPEND_ARRAY_BEGIN(&doc, "tags", &tags);
      BSON_APPEND_UTF8(&tags, "0", "blue");
      BSON_APPEND_UTF8(&tags, "1", "small");
      bson_append_array_end(&doc, &tags);
      bson_append_document_end(&batch, &doc);
    }
    bson_append_array_end(&cur, &batch);
    BSON_APPEND_INT64(&cur, "id", 0);
    BSON_APPEND_UTF8(&cur, "ns", ns);
    bson_append_document_end(&r, &cur);
    BSON_APPEND_DOUBLE(&r, "ok", 1.0);
  } else {
    BSON_APPEND_DOUBLE(&r, "ok", 1.0);
  }
  emit_msg(c, request_id, &r);
  bson_destroy(&r);
}

static void handle_query(conn_t* c, const uint8_t* m, int32_t len, int32_t request_id) {
  const uint8_t* p = m + 20;
  const uint8_t* end = m + len;
  size_t nl = strnlen((const char*)p, (size_t)(end - p));
  p += nl + 1 + 8;
  if (p + 5 > end) return;
  bson_t q;
  if (!bson_init_static(&q, p, (size_t)le32(p))) return;
  bson_iter_t it;
  bson_t r;
  bson_init(&r);
  if (bson_iter_init(&it, &q) && bson_iter_next(&it)) {
    const char* k = bson_iter_key(&it);
    if (strcmp(k, "$query") == 0 && BSON_ITER_HOLDS_DOCUMENT(&it)) {
      bson_iter_t in;
      if (bson_iter_recurse(&it, &in) && bson_iter_next(&in)) k = bson_iter_key(&in);
    }
    if (is_hello_name(k)) hello_reply(&r, 0);
    else BSON_APPEND_DOUBLE(&r, "ok", 1.0);
  }
  emit_reply(c, request_id, &r);
  bson_destroy(&r);
}

static int process(conn_t* c) {
  size_t off = 0;
  while (c->in.len - off >= 16) {
    const uint8_t* m = c->in.data + off;
    int32_t len = le32(m);
    if (len < 16 || len > 64 * 1024 * 1024) return -1;
    if (c->in.len - off < (size_t)len) {
      reserve(&c->in, (size_t)len - (c->in.len - off));
      break;
    }
    int32_t op = le32(m + 12);
    if (op == OP_MSG && len >= 21) handle_msg(c, m, len, le32(m + 4));
    else if (op == OP_QUERY) handle_query(c, m, len, le32(m + 4));
    off += (size_t)len;
  }
  if (off) {
    memmove(c->in.data, c->in.data + off, c->in.len - off);
    c->in.len -= off;
  }
  if (c->in.len == 0 && c->in.cap > (1u << 20)) {
    free(c->in.data);
    c->in.data = NULL;
    c->in.cap = 0;
  }
  return 0;
}

static int flush_out(conn_t* c) {
  while (c->out_off < c->out.len) {
    ssize_t n = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN) return 1;
      if (errno == EINTR) continue;
      return -1;
    }
    c->out_off += (size_t)n;
  }
  c->out.len = c->out_off = 0;
  if (c->out.cap > (1u << 20)) { free(c->out.data); c->out.data = NULL; c->out.cap = 0; }
  return 0;
}

static void close_conn(int ep, conn_t* c) {
  epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  free(c->in.data);
  free(c->out.data);
  free(c);
}

static void* worker(void* arg) {
  (void)arg;
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = NULL};
  epoll_ctl(ep, EPOLL_CTL_ADD, listen_fd, &ev);
  struct epoll_event evs[256];
  for (;;) {
    int n = epoll_wait(ep, evs, 256, -1);
    for (int i = 0; i < n; i++) {
      conn_t* c = evs[i].data.ptr;
      if (c == NULL) {
        for (;;) {
          int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK);
          if (fd < 0) break;
          int one = 1;
          setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          conn_t* nc = calloc(1, sizeof *nc);
          nc->fd = fd;
          struct epoll_event cev = {.events = EPOLLIN, .data.ptr = nc};
          epoll_ctl(ep, EPOLL_CTL_ADD, fd, &cev);
        }
        continue;
      }
      if (evs[i].events & (EPOLLERR | EPOLLHUP)) { close_conn(ep, c); continue; }
      if (evs[i].events & EPOLLIN) {
        int closed = 0;
        for (;;) {
          reserve(&c->in, 16384);
          size_t room = c->in.cap - c->in.len;
          ssize_t r = recv(c->fd, c->in.data + c->in.len, room, 0);
          if (r > 0) {
            c->in.len += (size_t)r;
            if ((size_t)r < room) break;  /* drained, most likely */
            continue;
          }
          if (r < 0 && (errno == EAGAIN || errno == EINTR)) break;
          closed = 1;
          break;
        }
        if (closed || process(c) < 0) { close_conn(ep, c); continue; }
      }
      int fr = flush_out(c);
      if (fr < 0) { close_conn(ep, c); continue; }
      if ((fr == 1) != c->want_out) {
        c->want_out = fr == 1;
        struct epoll_event mev = {.events = EPOLLIN | (c->want_out ? EPOLLOUT : 0), .data.ptr = c};
        epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &mev);
      }
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  const char* host = "127.0.0.1";
  int port = 0, threads = 1, opt;
  while ((opt = getopt(argc, argv, "l:p:t:")) != -1) {
    if (opt == 'l') host = optarg;
    else if (opt == 'p') port = atoi(optarg);
    else if (opt == 't') threads = atoi(optarg);
    else { fprintf(stderr, "usage: %s [-l HOST] -p PORT [-t THREADS]\n", argv[0]); return 2; }
  }
  signal(SIGPIPE, SIG_IGN);
  listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  int one = 1;
  setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  inet_pton(AF_INET, host, &a.sin_addr);
  if (bind(listen_fd, (struct sockaddr*)&a, sizeof a) < 0 || listen(listen_fd, 4096) < 0) {
    perror("stub_upstream: bind/listen");
    return 1;
  }
  socklen_t al = sizeof a;
  getsockname(listen_fd, (struct sockaddr*)&a, &al);
  printf("stub_upstream listening on %s:%d threads=%d\n", host, ntohs(a.sin_port), threads);
  fflush(stdout);
  pthread_t t[64];
  if (threads < 1) threads = 1;
  if (threads > 64) threads = 64;
  for (int i = 1; i < threads; i++) pthread_create(&t[i], NULL, worker, NULL);
  worker(NULL);
  return 0;
}
