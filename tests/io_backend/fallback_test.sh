#!/usr/bin/env bash
# The io_uring build's fallback to epoll: when the kernel refuses io_uring_setup
# (here a seccomp filter, as container runtimes install, via deny_io_uring) or the operator sets
# DOCGUARD_IO_BACKEND=epoll, docguard re-executes the docguard-epoll built beside it, and the
# start-up log line and /status say so and why; without docguard-epoll it exits with a message.
#
#   fallback_test.sh BIN_DIR DENY_IO_URING
#
# BIN_DIR holds docguard (an io_uring build) and docguard-epoll. Run by ctest when the tree is
# configured with -DDOCGUARD_IO_URING=ON.
set -euo pipefail
bin=$(cd "$1" && pwd) deny=$2  # absolute, as docguard names its own directory
run=$(mktemp -d /tmp/docguard-iobackend.XXXXXX)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$run"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start NAME [env/wrapper...]: runs docguard (nothing listens upstream: /status still answers),
# waits for /status and leaves its body in $run/NAME.status and its log in $run/NAME.log.
start() {
  local name=$1 admin
  shift
  admin=$(free_port)
  "$@" "$bin/docguard" --listen "127.0.0.1:$(free_port)" --upstream mongodb://127.0.0.1:1 \
    --admin "127.0.0.1:$admin" --threads 1 >"$run/$name.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$admin/status" >"$run/$name.status" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  pid=
}
expect() {  # expect FILE TEXT
  grep -qF -- "$2" "$1" || { fail "$(basename "$1") lacks '$2'"; sed 's/^/  | /' "$1" >&2; }
}

# 1. io_uring refused by seccomp: the epoll binary runs and says why.
start denied "$deny"
expect "$run/denied.log" "io_uring unavailable (io_uring_setup: Operation not permitted"
expect "$run/denied.log" "running $bin/docguard-epoll (epoll) instead"
expect "$run/denied.log" "io backend epoll (fallback from io_uring: io_uring_setup: Operation not permitted"
expect "$run/denied.status" '"io_backend":"epoll"'
expect "$run/denied.status" '"io_backend_fallback":"io_uring_setup: Operation not permitted'

# 2. The operator's switch.
start switched env DOCGUARD_IO_BACKEND=epoll
expect "$run/switched.log" "io backend epoll (fallback from io_uring: DOCGUARD_IO_BACKEND=epoll)"
expect "$run/switched.status" '"io_backend":"epoll","io_backend_fallback":"DOCGUARD_IO_BACKEND=epoll"'

# 3. Allowed: io_uring itself, no fallback (skipped where this kernel refuses io_uring anyway).
if python3 -c 'import ctypes,sys; fd=ctypes.CDLL(None,use_errno=True).syscall(425,4,ctypes.create_string_buffer(120)); sys.exit(fd<0)'; then
  start allowed
  expect "$run/allowed.log" "io backend io_uring"
  expect "$run/allowed.status" '"io_backend":"io_uring"'
  grep -q fallback "$run/allowed.status" && fail "io_uring run reports a fallback"
else
  echo "skipped the io_uring run: this kernel refuses io_uring_setup"
fi

# 4. No docguard-epoll beside it: a clear message and exit status 1, no re-execution.
mkdir "$run/alone"
cp "$bin/docguard" "$run/alone/docguard"
rc=0
"$deny" "$run/alone/docguard" --listen 127.0.0.1:1 >"$run/alone.log" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "without docguard-epoll the exit status is $rc, not 1"
expect "$run/alone.log" "install an epoll build (cmake -DDOCGUARD_IO_URING=OFF) as $run/alone/docguard-epoll"

if ((failures)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "io backend fallback: all checks passed"
