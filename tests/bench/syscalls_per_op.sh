#!/usr/bin/env bash
# Load-independent cost per operation of each proxy: system calls, context switches
# and (with --callgrind) user-space instructions per operation, for a fixed number of operations
# of the benchmark's small-op mix (50% ~200-byte insert / 50% find by _id; docs/performance.md)
# through the stub upstream.
# Counts, not times: they hardly move when other work shares the machine.
#
#   tests/bench/syscalls_per_op.sh [BUILD_DIR] [-n OPS] [-c CONNS] [--strace] [--callgrind] [--profile]
#                                  [--targets "haproxy docguard mongobetween"]
#                                  [--load "-m big -b 1048576"]
#
# - syscalls/op and context switches/op: `perf stat -e raw_syscalls:sys_enter,context-switches
#   -p PID` (kernel tracepoint counters; no ptrace, so the proxy runs at full speed and batches
#   as it would without the measurement) over exactly one load run of OPS operations.
# - --strace: also `strace -c -f -p PID` over a second run, for the breakdown by system call
#   (ptrace slows the proxy, so more bytes wait per read: its totals run a little lower).
# - --callgrind: docguard and HAProxy under callgrind (not mongobetween: valgrind does not run Go
#   programs well), instrumentation switched on only for the load run (OPS/8 operations):
#   user-space instructions per operation, the proxy's own and its libraries' (kernel work is not
#   counted: see the syscalls). This machine's VM has no hardware counters for `perf stat -e
#   instructions`.
# - --profile: `perf record -e cpu-clock -g` over a third run, classified by kernel_profile.py into
#   user space, waking the peer, being switched out, TCP/IP and the rest of the kernel (shares of
#   the samples; the split is what the profile shows, the machine's load moves it a little).
# --load replaces the small-op mix with other load generator arguments (e.g. 1 MiB inserts).
# Prints one line per target: target=... ops=... syscalls_per_op=... csw_per_op=... [ir_per_op=...]
# mongobetween is included when MONGOBETWEEN_BIN (or .tools/bin/mongobetween) is executable.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
build=build-bench
ops=40000 conns=16 use_strace=0 use_cg=0 use_prof=0 targets="haproxy docguard mongobetween" extra_args=()
load_args="-m mix"
while (($#)); do
  case "$1" in
    -n) ops=$2; shift ;;
    -c) conns=$2; shift ;;
    --strace) use_strace=1 ;;
    --callgrind) use_cg=1 ;;
    --profile) use_prof=1 ;;
    --targets) targets=$2; shift ;;
    --docguard-arg) extra_args+=("$2"); shift ;;
    --load) load_args=$2; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) build=$1 ;;
  esac
  shift
done
bin=$build/bin
mb=${MONGOBETWEEN_BIN:-.tools/bin/mongobetween}

run=$(mktemp -d /tmp/docguard-sysc.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$run"
}
trap cleanup EXIT
free_port() {  # below the ephemeral range, so no outgoing connection can take it first
  PYTHONPATH="$here/tests/integration/python" python3 -c 'import harness; print(harness.free_port())'
}
wait_port() {
  for _ in $(seq 1 300); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.1; done
  echo "syscalls_per_op: nothing listens on port $1" >&2; return 1
}

stub_port=$(free_port)
$bin/stub_upstream -p "$stub_port" >"$run/stub.log" 2>&1 &
pids+=($!)
wait_port "$stub_port"

cat >"$run/dg.yaml" <<EOF
mode: warn
log_level: warn
limits:
  max_connections: 20000
rules:
  - match: "*"
    max_document_bytes: 2MB
    max_array_length: 10000
    array_length: {tags: 100}
    require_push_slice: true
    max_nesting_depth: 100
    max_lookup_ratio: 0.5
EOF

start_target() {  # $1 = target, [$2 = wrapper...]; sets tpid tport
  local t=$1; shift
  tport=$(free_port)
  case "$t" in
    haproxy)
      cat >"$run/h.cfg" <<EOF
global
  maxconn 5000
  nbthread 2
defaults
  mode tcp
  timeout connect 5s
  timeout client 1h
  timeout server 1h
frontend f
  bind 127.0.0.1:$tport
  default_backend b
backend b
  server s1 127.0.0.1:$stub_port
EOF
      # Its own session: on a stop signal HAProxy signals its whole process group.
      setsid "$@" haproxy -db -f "$run/h.cfg" >"$run/$t.log" 2>&1 & ;;
    docguard)
      local admin; admin=$(free_port)
      "$@" $bin/docguard --listen "127.0.0.1:$tport" --upstream "mongodb://127.0.0.1:$stub_port" \
        --admin "127.0.0.1:$admin" --config "$run/dg.yaml" "${extra_args[@]}" >"$run/$t.log" 2>&1 & ;;
    mongobetween)
      "$@" "$mb" -network tcp4 -loglevel error -pretty=false \
        "127.0.0.1:$tport=mongodb://127.0.0.1:$stub_port/?directConnection=true&maxpoolsize=1000" \
        >"$run/$t.log" 2>&1 & ;;
  esac
  tpid=$!
  pids+=($tpid)
  wait_port "$tport"
}
load() {  # $1 = port, $2 = ops
  # shellcheck disable=SC2086
  $bin/docguard_load -u "mongodb://127.0.0.1:$1/?appname=sysc" $load_args -t "$conns" -c "$conns" \
    -d 600 -n "$2" 2>>"$run/load.err"
}
field() { sed -n "s/.*\b$1=\([0-9.]*\).*/\1/p" <<<"$2"; }
# Stops a measuring tool (perf stat/record, strace) that runs in the background until SIGINT.
# A background job of a non-interactive shell starts with SIGINT ignored, and the tool only
# catches it once it has installed its handler: an INT that arrives earlier (a slow start on a
# loaded machine, a load run that failed at once) is lost, and a bare `wait` then waits forever.
# So the INT is repeated every second, and after 10 s the tool is killed.
stop_tool() {  # $1 = pid, $2 = name for the message
  local pid=$1 i
  kill -INT "$pid" 2>/dev/null || true
  for i in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    ((i % 10)) || kill -INT "$pid" 2>/dev/null || true
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "syscalls_per_op: $2 did not stop on SIGINT; killed" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

for t in $targets; do
  if [ "$t" = mongobetween ] && [ ! -x "$mb" ]; then
    echo "target=mongobetween skipped: no executable at $mb (set MONGOBETWEEN_BIN)"; continue
  fi
  start_target "$t"
  # warm up: first connections, allocator, page faults (fewer for short runs of large inserts)
  load "$tport" $((ops < 8000 ? ops / 4 + 1 : 2000)) >/dev/null
  perf stat -x, -e raw_syscalls:sys_enter,context-switches,task-clock -p "$tpid" -o "$run/perf.$t" &
  ppid=$!
  sleep 0.3
  out=$(load "$tport" "$ops")
  stop_tool "$ppid" "perf stat"
  n=$(field ops "$out")
  sc=$(awk -F, '/raw_syscalls/ {print $1}' "$run/perf.$t")
  cs=$(awk -F, '/context-switches/ {print $1}' "$run/perf.$t")
  tc=$(awk -F, '/task-clock/ {print $1}' "$run/perf.$t")
  line="target=$t ops=$n syscalls_per_op=$(awk "BEGIN{printf \"%.2f\", $sc/$n}")"
  line+=" csw_per_op=$(awk "BEGIN{printf \"%.2f\", $cs/$n}") cpu_us_per_op=$(awk "BEGIN{printf \"%.2f\", $tc*1000/$n}")"
  line+=" ops_per_s=$(field ops_per_s "$out")"
  if ((use_strace)); then
    strace -c -f -p "$tpid" -o "$run/strace.$t" &
    spid=$!
    sleep 0.5
    out=$(load "$tport" "$ops")
    stop_tool "$spid" strace
    n=$(field ops "$out")
    total=$(awk '$NF=="total" {print $(NF-2)}' "$run/strace.$t")
    line+=" strace_syscalls_per_op=$(awk "BEGIN{printf \"%.2f\", $total/$n}")"
    line+=" strace_top=$(awk -v n="$n" 'NR>2 && $NF!="total" && $1 !~ /^-/ {c=$4; printf "%s:%.2f,", $NF, c/n}' "$run/strace.$t" | sed 's/,$//')"
  fi
  if ((use_prof)); then
    perf record -q -e cpu-clock -g -p "$tpid" -o "$run/prof.$t" 2>/dev/null &
    rpid=$!
    sleep 0.5
    load "$tport" "$ops" >/dev/null
    stop_tool "$rpid" "perf record"
    prof=$(perf script -i "$run/prof.$t" 2>/dev/null | python3 tests/bench/kernel_profile.py "$t")
    line+=" ${prof#profile=$t }"
  fi
  kill "$tpid" 2>/dev/null; wait "$tpid" 2>/dev/null || true
  if ((use_cg)) && [ "$t" != mongobetween ]; then
    start_target "$t" valgrind --tool=callgrind --instr-atstart=no \
      --callgrind-out-file="$run/cg.out"
    load "$tport" 200 >/dev/null
    callgrind_control -i on "$tpid" >/dev/null
    cgops=$(( ops / 8 ))
    out=$(load "$tport" "$cgops")
    callgrind_control -i off "$tpid" >/dev/null
    n=$(field ops "$out")
    [ -n "$n" ] || { echo "syscalls_per_op: load under callgrind failed: $out" >&2; n=1; }
    kill -TERM "$tpid"; wait "$tpid" 2>/dev/null || true
    ir=$(sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$run/$t.log")
    [ -n "$ir" ] || { ir=0; tail -5 "$run/$t.log" >&2; }
    line+=" ir_per_op=$(awk "BEGIN{printf \"%.0f\", $ir/$n}") cg_ops=$n"
    [ -n "${CALLGRIND_TOP:-}" ] && callgrind_annotate --inclusive=no "$run/cg.out"* 2>/dev/null | sed -n '1,45p' >&2
  fi
  echo "$line"
done
