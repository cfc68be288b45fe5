#!/usr/bin/env bash
# docguard benchmark suite: one command, side by side on loopback.
#
#   scripts/bench.sh            # full run, about 23 minutes on a 2-core machine
#   scripts/bench.sh --quick    # a smoke run of under 2 minutes: 1 round of 2 s runs, small ops
#                               # and 1 MiB inserts, 2,000 idle connections, no FerretDB
#
# Options: --rounds N  --secs S  --no-ferretdb  --no-idle  --no-micro  --no-unix  --idle-conns K
#          --charts DIR (where the PNG/SVG charts go; default build-bench/charts; the images
#          of docs/performance.md: --charts docs/bench)
# Environment: MONGOBETWEEN_BIN (default .tools/bin/mongobetween; build it with
#          scripts/build-mongobetween.sh): mongobetween runs side by side when it is executable.
#
# What it does:
#   1. builds build-bench/ (Release): docguard, the stub upstream, the libmongoc load generator,
#      the microbenchmarks and the callgrind driver (tests/bench/);
#   2. starts upstreams: the stub (tests/bench/stub_upstream.c) and FerretDB (.tools/bin);
#   3. starts targets in front of each: HAProxy (TCP mode, the reference relay), docguard with
#      all rules on (the query guardrail and the workload ledger included) in warn mode, docguard in block mode, mongobetween if .tools/bin has it;
#      "direct" connects the driver to the upstream itself; in front of the stub also HAProxy
#      and docguard (warn) listening on a Unix domain socket ("haproxy-unix", "dg-warn-unix",
#      both still reaching the stub over TCP; --no-unix leaves them out);
#   4. runs scenarios (connection counts 16/64/256/1,000 of small operations; inserts of
#      4 KiB, 64 KiB and 1 MiB documents), interleaving targets within each round (rotating their order), and takes
#      medians over rounds: throughput, p50/p99 latency, proxy CPU per operation (utime+stime
#      of the proxy process over the measured window / operations), proxy RSS, and each as a
#      ratio to HAProxy on the same kind of listener (the Unix socket targets run every scenario
#      of the stub);
#   5. holds K idle connections through docguard (and HAProxy, mongobetween, and both on the
#      Unix socket) for memory per connection;
#   6. runs the Google Benchmark microbenchmarks and the callgrind instruction count.
# Prints a Markdown report and writes it to build-bench/results.md (raw lines: build-bench/raw.txt),
# the same numbers as build-bench/results.csv, and charts of them (tests/bench/plot.py, matplotlib).
# Ends with the comparison tables against HAProxy (docguard warn over TCP and over the Unix socket:
# small ops per connection count, throughput, CPU per operation and p99 as ratios, marked against
# the targets; inserts and memory per idle connection side by side), also written to
# build-bench/summary.md.
# Every load run is bounded in time; everything listens on 127.0.0.1 or on sockets in /tmp.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
build=build-bench
bin=$build/bin

rounds=3 secs=6 quick=0 ferret=1 idle=1 micro=1 unix=1 idle_conns=10000 charts=
while (($#)); do
  case "$1" in
    # Its settings are defaults: options after it still apply (--quick --rounds 2).
    --quick) quick=1 rounds=1 secs=2 idle_conns=2000 ferret=0 ;;
    --rounds) rounds=$2; shift ;;
    --secs) secs=$2; shift ;;
    --no-ferretdb) ferret=0 ;;
    --no-idle) idle=0 ;;
    --no-micro) micro=0 ;;
    --no-unix) unix=0 ;;
    --idle-conns) idle_conns=$2; shift ;;
    --charts) charts=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/{/^#/p}' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

# ---- dependencies and build ----
if ! command -v haproxy >/dev/null; then
  echo "bench: installing haproxy" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends haproxy >/dev/null || true
fi
cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDOCGUARD_TESTS=OFF -DDOCGUARD_BENCH=ON >/dev/null
micro_targets=()
((micro)) && micro_targets=(docguard_micro_bench bench_one_insert)
ninja -C $build -j"${DOCGUARD_JOBS:-2}" docguard stub_upstream docguard_load "${micro_targets[@]}" >/dev/null
charts=${charts:-$build/charts}
mb_bin=${MONGOBETWEEN_BIN:-.tools/bin/mongobetween}

# File descriptors: a proxy needs two per client connection (client + upstream), so 1,000
# connections need over 2,000 and the idle test more. Raise the hard limit where the process may
# (root outside a container; never lowering it), otherwise take the soft limit up to the hard one.
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && ((hard < 65536)); then
  ulimit -Hn 65536 2>/dev/null || true
  hard=$(ulimit -Hn)
fi
[ "$hard" = unlimited ] && hard=1048576
ulimit -n "$hard"
max_idle=$(((hard - 200) / 2))
if ((idle_conns > max_idle)); then
  echo "bench: ulimit -Hn is $hard: docguard can hold at most $max_idle client connections" \
       "(2 fds each); idle test uses $max_idle instead of $idle_conns" >&2
  idle_conns=$max_idle
fi

# Lower case only (mktemp's names mix cases): the Unix sockets live here, and a driver may
# lowercase the socket path it finds in a URI (the Node.js driver does; docguard warns then).
run=/tmp/docguard-bench-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
mkdir -m 700 "$run"
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
  for _ in $(seq 1 100); do
    (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "bench: nothing listens on port $1" >&2
  return 1
}
wait_unix() {  # a connect, not only the file: docguard creates the file before it listens
  for _ in $(seq 1 100); do
    python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "$1" 2>/dev/null &&
      return 0
    sleep 0.1
  done
  echo "bench: nothing listens on $1" >&2
  return 1
}
unix_uri() {  # the socket path, URL-encoded as the host: mongodb://%2Ftmp%2F...%2Fx.sock
  local p=$1
  echo "mongodb://${p//\//%2F}"
}

# PORT: TCP port of the stub and of each TCP target, SOCK: socket path of each Unix socket target
# (the idle test connects to those); URI: what the load generator connects to, for every upstream
# and target.
declare -A PORT SOCK PID URI
# listening NAME PID unix|"" PORT: records a started proxy and waits until its listener answers.
listening() {
  pids+=("$2"); PID[$1]=$2
  if [ "$3" = unix ]; then
    SOCK[$1]=$run/$1.sock; URI[$1]=$(unix_uri "$run/$1.sock")
    wait_unix "$run/$1.sock"
  else
    PORT[$1]=$4; URI[$1]="mongodb://127.0.0.1:$4"
    wait_port "$4"
  fi
}
start_stub() {
  local port; port=$(free_port)
  $bin/stub_upstream -p "$port" >"$run/stub.log" 2>&1 &
  pids+=($!); PID[stub]=$!; PORT[stub]=$port; URI[stub]="mongodb://127.0.0.1:$port"
  wait_port "$port"
}
start_ferretdb() {
  local port; port=$(free_port)
  mkdir -p "$run/ferret"
  .tools/bin/ferretdb --handler=sqlite --sqlite-url="file:$run/ferret/" --listen-addr="127.0.0.1:$port" \
    --state-dir="$run/ferret" --telemetry=disable --log-level=ERROR >"$run/ferret.log" 2>&1 &
  pids+=($!); PID[ferretdb]=$!; PORT[ferretdb]=$port; URI[ferretdb]="mongodb://127.0.0.1:$port"
  wait_port "$port"
}
rules_yaml() {  # $1 = warn | block
  cat <<EOF
mode: $1
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
    # The query guardrail too (the workload ledger is on by default): the finds are by _id.
    require_index: true
EOF
}
start_docguard() {  # $1 = name, $2 = warn|block, $3 = upstream port, [$4 = unix]
  local port admin listen=(); admin=$(free_port)
  rules_yaml "$2" >"$run/$1.yaml"
  if [ "${4:-}" = unix ]; then
    # The socket listener as a deployment configures it: the file's listen: (no --listen flag,
    # which would replace it).
    printf 'listen:\n  - unix: "%s"\n    mode: "0600"\n' "$run/$1.sock" >>"$run/$1.yaml"
  else
    port=$(free_port)
    listen=(--listen "127.0.0.1:$port")
  fi
  $bin/docguard "${listen[@]}" --upstream "mongodb://127.0.0.1:$3" \
    --admin "127.0.0.1:$admin" --config "$run/$1.yaml" >"$run/$1.log" 2>&1 &
  listening "$1" $! "${4:-}" "${port:-}"
}
start_haproxy() {  # $1 = name, $2 = upstream port, [$3 = unix]
  local port bind
  if [ "${3:-}" = unix ]; then
    bind="unix@$run/$1.sock mode 600"
  else
    port=$(free_port)
    bind="127.0.0.1:$port"
  fi
  # Every connection holds two descriptors; HAProxy refuses to start if maxconn does not fit
  # its limit.
  local maxconn=$(((hard - 200) / 2))
  cat >"$run/$1.cfg" <<EOF
global
  maxconn $maxconn
  nbthread 2
defaults
  mode tcp
  timeout connect 5s
  timeout client 1h
  timeout server 1h
frontend f
  bind $bind
  maxconn $maxconn
  default_backend b
backend b
  server s1 127.0.0.1:$2 maxconn $maxconn
EOF
  haproxy -db -f "$run/$1.cfg" >"$run/$1.log" 2>&1 &
  listening "$1" $! "${3:-}" "${port:-}"
}
start_mongobetween() {  # $1 = name, $2 = upstream port
  local port; port=$(free_port)
  # It answers isMaster itself (wire version 8, sessions advertised: the stub advertises them
  # too) and pools upstream connections; statsd goes to localhost:8125 (UDP, nobody listens).
  "$mb_bin" -network tcp4 -loglevel error -pretty=false \
    "127.0.0.1:$port=mongodb://127.0.0.1:$2/?directConnection=true&maxpoolsize=1000" >"$run/$1.log" 2>&1 &
  pids+=($!); PID[$1]=$!; PORT[$1]=$port; URI[$1]="mongodb://127.0.0.1:$port"
  wait_port "$port"
}

raw=$build/raw.txt
: >"$raw"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- proxy rules include 2>/dev/null || echo '+local changes')"

# run_one SERIES SCENARIO TARGET ROUND THREADS CONNS MODE [DOC_BYTES]
run_one() {
  local series=$1 scen=$2 target=$3 round=$4 threads=$5 conns=$6 mode=$7 bytes=${8:-221}
  local t=$target up
  [ "$series" = ferretdb ] && up=ferretdb || up=stub
  local key="$series-$target"
  [ "$target" = direct ] && key=$up
  local pidarg=()
  [ "$target" != direct ] && pidarg=(-P "${PID[$key]}")
  local out
  out=$(timeout $((secs + 150)) $bin/docguard_load -u "${URI[$key]}/?appname=bench" \
        -m "$mode" -b "$bytes" -t "$threads" -c "$conns" -d "$secs" "${pidarg[@]}" 2>>"$run/load.err") || out="failed"
  echo "$series $scen $t $round $out conns=$conns doc_bytes=$bytes" >>"$raw"
  printf '  %-9s %-10s %-13s round %s: %s\n' "$series" "$scen" "$t" "$round" "$out" >&2
}

# ---- start everything ----
start_stub
targets=(direct haproxy dg-warn dg-block)
start_haproxy stub-haproxy "${PORT[stub]}"
start_docguard stub-dg-warn warn "${PORT[stub]}"
start_docguard stub-dg-block block "${PORT[stub]}"
mongobetween_status="not run: no executable at $mb_bin (set MONGOBETWEEN_BIN or run scripts/build-mongobetween.sh; the Go module proxy refuses the module itself)"
if [ -x "$mb_bin" ]; then
  start_mongobetween stub-mongobetween "${PORT[stub]}"
  targets+=(mongobetween)
  mongobetween_status="$mb_bin, built from source (scripts/build-mongobetween.sh)"
else
  echo "bench: mongobetween skipped: no executable at $mb_bin (set MONGOBETWEEN_BIN; see scripts/build-mongobetween.sh)" >&2
fi
# The Unix socket listeners, client side only: both reach the stub over TCP like the others.
unix_targets=()
if ((unix)); then
  start_haproxy stub-haproxy-unix "${PORT[stub]}" unix
  start_docguard stub-dg-warn-unix warn "${PORT[stub]}" unix
  unix_targets=(haproxy-unix dg-warn-unix)
fi
if ((ferret)) && [ -x .tools/bin/ferretdb ]; then
  start_ferretdb
  start_haproxy ferretdb-haproxy "${PORT[ferretdb]}"
  start_docguard ferretdb-dg-warn warn "${PORT[ferretdb]}"
  start_docguard ferretdb-dg-block block "${PORT[ferretdb]}"
else
  ferret=0
fi

# Scenarios: name threads connections mode [document bytes of the big mode]. The small-op (mix)
# scenarios are the ones the summary judges against HAProxy; the inserts it reports side by side.
# The Unix socket targets run all of them.
scenarios=("small-16 16 16 mix" "small-64 64 64 mix" "small-256 64 256 mix" "conns-1000 100 1000 mix"
           "insert-4KiB 8 8 big 4096" "insert-64KiB 8 8 big 65536" "insert-1MiB 8 8 big 1048576")
((quick)) && scenarios=("small-16 16 16 mix" "small-64 64 64 mix" "small-256 64 256 mix" "conns-1000 100 1000 mix"
                        "insert-1MiB 8 8 big 1048576")
# A scenario whose connections the descriptor limit cannot hold would only report errors:
# the proxy holds 2 per connection, and the load generator, the stub and HAProxy run under
# the same limit.
fit=()
for s in "${scenarios[@]}"; do
  read -r scen threads conns _ <<<"$s"
  if ((2 * conns + 200 > hard)); then
    echo "bench: $scen skipped: ulimit -Hn is $hard, $conns connections need $((2 * conns + 200))" >&2
  else
    fit+=("$s")
  fi
done
scenarios=("${fit[@]}")

echo "bench: $rounds round(s) x ${#scenarios[@]} scenarios x ${#targets[@]} targets" \
     "(+${#unix_targets[@]} Unix socket targets), ${secs}s each;" \
     "load average $load_before" >&2
for ((r = 1; r <= rounds; r++)); do
  for s in "${scenarios[@]}"; do
    read -r scen threads conns mode bytes <<<"$s"
    these=("${targets[@]}" "${unix_targets[@]}")
    n=${#these[@]}
    for ((i = 0; i < n; i++)); do  # rotate the order every round
      t=${these[$(((i + r - 1) % n))]}
      run_one stub "$scen" "$t" "$r" "$threads" "$conns" "$mode" "${bytes:-221}"
    done
  done
  if ((ferret)); then
    for ((i = 0; i < 4; i++)); do
      t=${targets[$(((i + r - 1) % 4))]}
      run_one ferretdb small-16 "$t" "$r" 16 16 mix
    done
  fi
done

# ---- idle connections: memory per connection ----
if ((idle)); then
  idle_targets=(dg-warn haproxy)
  [[ " ${targets[*]} " == *" mongobetween "* ]] && idle_targets+=(mongobetween)
  idle_targets+=("${unix_targets[@]}")
  for t in "${idle_targets[@]}"; do
    if [ -n "${SOCK[stub-$t]:-}" ]; then addr=(-h "${SOCK[stub-$t]}"); else addr=(-h 127.0.0.1 -p "${PORT[stub-$t]}"); fi
    out=$(timeout 300 $bin/docguard_load -m idle "${addr[@]}" -k "$idle_conns" -s 1 \
          -P "${PID[stub-$t]}" 2>>"$run/load.err") || out="failed $out"
    echo "idle idle $t 1 $out" >>"$raw"
    echo "  idle $t: $out" >&2
    sleep 2  # let the proxy close them
  done
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- microbenchmarks and instruction count ----
if ((micro)); then
  mt=0.2; ((quick)) && mt=0.05
  $bin/docguard_micro_bench --benchmark_min_time=$mt --benchmark_format=json \
    --benchmark_out=$build/micro.json --benchmark_out_format=json \
    --benchmark_filter='^(frame/whole|decode/|decode\+inspect/(none|all)/|inspect_only|enforce|memcpy)' >/dev/null 2>&1 ||
    echo "bench: microbenchmarks failed" >&2
  tests/bench/callgrind_one_insert.sh $build 2000 >$build/callgrind.txt 2>&1 || echo "callgrind failed" >$build/callgrind.txt
fi

# ---- report ----
python3 - "$raw" "$build/results.md" "$build/micro.json" "$build/callgrind.txt" "$build/results.csv" \
  "$build/summary.md" <<PY
import json, os, statistics, sys
raw, out_path, micro_path, cg_path, csv_path, summary_path = sys.argv[1:7]
rows = {}
idle = {}
for line in open(raw):
    parts = line.split()
    if len(parts) < 5: continue
    series, scen, target, rnd = parts[:4]
    kv = dict(p.split('=', 1) for p in parts[4:] if '=' in p)
    if series == 'idle':
        idle[target] = kv
        continue
    rows.setdefault((series, scen, target), []).append(kv)

def med(runs, key):
    vals = [float(r[key]) for r in runs if key in r and float(r.get('ops', 0)) > 0]
    return statistics.median(vals) if vals else None

def fmt(v, d=0):
    return '-' if v is None else f'{v:,.{d}f}'

def ratio(a, b, d=2):
    return '-' if a is None or b in (None, 0) else f'{a / b:.{d}f}x'

def reference(target):  # the relay a target is compared with: HAProxy on the same kind of listener
    return 'haproxy-unix' if target.endswith('-unix') else 'haproxy'

def idle_bytes(t):  # bytes per idle connection of a target's idle run, None if it has none
    kv = idle.get(t, {})
    return float(kv['bytes_per_conn']) if 'bytes_per_conn' in kv else None

out = []
out.append('# docguard benchmark results\n')
out.append(f"Machine: {os.cpu_count()} cores, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB; "
           f"load average before: $load_before, after: $load_after. "
           f"$rounds round(s), ${secs}s per run, medians over rounds. Driver: libmongoc 1.23 "
           f"(tests/bench/load.c), 50% insert of a ~200-byte document with a small array / 50% find by _id; "
           f"insert-1MiB: 1 MiB documents. docguard: all rules on; threads = cores; HAProxy: nbthread 2, TCP mode. "
           f"*-unix: the client side on a Unix domain socket, compared with haproxy-unix. "
           f"mongobetween: $mongobetween_status. docguard commit: $commit.\n")
out.append('| upstream | scenario | target | ops/s | vs HAProxy | p50 µs | p99 µs | p99 vs HAProxy | proxy CPU µs/op | CPU vs HAProxy | of it kernel µs/op | proxy RSS MiB | RSS vs HAProxy | errors |')
out.append('|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
order = ['direct', 'haproxy', 'dg-warn', 'dg-block', 'mongobetween', 'haproxy-unix', 'dg-warn-unix']
scen_order = ['small-16', 'small-64', 'small-256', 'conns-1000', 'insert-4KiB', 'insert-64KiB', 'insert-1MiB']
keys = sorted(rows, key=lambda k: (k[0] != 'stub', scen_order.index(k[1]) if k[1] in scen_order else 9, order.index(k[2]) if k[2] in order else 9))
for series, scen, target in keys:
    runs = rows[(series, scen, target)]
    # The reference relay on the same kind of listener.
    h = rows.get((series, scen, reference(target)), [])
    ops, p50, p99 = med(runs, 'ops_per_s'), med(runs, 'p50_us'), med(runs, 'p99_us')
    cpu, rss, sys_cpu = med(runs, 'cpu_us_per_op'), med(runs, 'rss_kib'), med(runs, 'sys_us_per_op')
    hops, hp99, hcpu, hrss = med(h, 'ops_per_s'), med(h, 'p99_us'), med(h, 'cpu_us_per_op'), med(h, 'rss_kib')
    errs = sum(int(r.get('errors', 0)) for r in runs) + sum(1 for r in runs if 'ops' not in r)
    out.append(f"| {series} | {scen} | {target} | {fmt(ops)} | {ratio(ops, hops)} | {fmt(p50)} | {fmt(p99)} | {ratio(p99, hp99)} | "
               f"{fmt(cpu, 1)} | {ratio(cpu, hcpu)} | {fmt(sys_cpu, 1)} | {fmt(rss / 1024 if rss else None, 1)} | {ratio(rss, hrss)} | {errs} |")
# Machine-readable medians for tests/bench/plot.py (and anyone else).
import csv
with open(csv_path, 'w', newline='') as f:
    w = csv.writer(f)
    w.writerow(['series', 'scenario', 'target', 'conns', 'doc_bytes', 'rounds', 'ops_per_s', 'p50_us', 'p99_us',
                'cpu_us_per_op', 'rss_kib', 'errors', 'idle_connections', 'bytes_per_conn', 'sys_us_per_op'])
    for series, scen, target in keys:
        runs = rows[(series, scen, target)]
        vals = [med(runs, k) for k in ('ops_per_s', 'p50_us', 'p99_us', 'cpu_us_per_op', 'rss_kib')]
        c = runs[0].get('conns', ''); b = runs[0].get('doc_bytes', '')
        errs = sum(int(r.get('errors', 0)) for r in runs) + sum(1 for r in runs if 'ops' not in r)
        sys_cpu = med(runs, 'sys_us_per_op')
        w.writerow([series, scen, target, c, b, len(runs)] + ['' if v is None else v for v in vals] +
                   [errs, '', '', '' if sys_cpu is None else sys_cpu])
    for t, kv in idle.items():
        w.writerow(['idle', 'idle', t, kv.get('idle_connections', ''), '', 1, '', '', '', '', kv.get('rss_held_kib', ''),
                    kv.get('failed', ''), kv.get('idle_connections', ''), kv.get('bytes_per_conn', ''), ''])
if any(k[0] == 'ferretdb' for k in rows):
    out.append('\nFerretDB (SQLite) is the bottleneck of its series and slows down as its store grows during the '
               'run, so its ratios carry little signal; the stub series measures the proxies.')
if idle:
    out.append('\n**Idle connections** (raw sockets, one hello each, then idle; RSS of the proxy process before and while held):\n')
    out.append('| target | connections held | failed | RSS before MiB | RSS held MiB | bytes per connection | vs HAProxy |')
    out.append('|---|---:|---:|---:|---:|---:|---:|')
    for t, kv in sorted(idle.items(), key=lambda i: order.index(i[0]) if i[0] in order else 9):
        if 'idle_connections' not in kv:
            out.append(f'| {t} | failed | | | | | |'); continue
        out.append(f"| {t} | {kv['idle_connections']} | {kv['failed']} | {int(kv['rss_before_kib'])/1024:.1f} | "
                   f"{int(kv['rss_held_kib'])/1024:.1f} | {idle_bytes(t):,.0f} | {ratio(idle_bytes(t), idle_bytes(reference(t)))} |")
if os.path.exists(micro_path):
    try:
        m = json.load(open(micro_path))
        out.append('\n**Microbenchmarks** (Google Benchmark, tests/bench/micro_bench.cc; run the binary for every rule alone):\n')
        out.append('| benchmark | ns/op | MB/s |')
        out.append('|---|---:|---:|')
        for b in m['benchmarks']:
            bps = b.get('bytes_per_second', 0) / 1e6
            out.append(f"| {b['name']} | {b['real_time'] if b['time_unit'] == 'ns' else b['real_time']:,.0f} | {bps:,.0f} |")
    except Exception as e:
        out.append(f'(microbenchmark JSON unreadable: {e})')
if os.path.exists(cg_path):
    out.append('\n**Instruction count:** ' + open(cg_path).read().strip().splitlines()[0])

# The comparison the targets are stated in: docguard (warn, all rules) against HAProxy on the
# same listener, small operations through the stub, per connection count. Ratios of the medians,
# as in the table above; each ratio is marked against its target. Then inserts and memory per
# idle connection, which have no targets: the same ratios, side by side, unmarked.
pairs = [('TCP', 'dg-warn', 'haproxy'), ('Unix socket', 'dg-warn-unix', 'haproxy-unix')]
def judged(a, b, ok):
    if a is None or b in (None, 0):
        return '-'
    return f'{a / b:.2f}x ' + ('ok' if ok(a / b) else 'MISSED')
def good(runs):
    return sum(1 for r in runs if float(r.get('ops', 0)) > 0)
def compared(label, scen, judge):
    # One row per listener with both docguard's and HAProxy's numbers: ops/s, CPU per operation,
    # p99, each as a ratio; judge: mark the ratios against the small-op targets.
    lines = []
    for listener, dg, hp in pairs:
        d, h = rows.get(('stub', scen, dg), []), rows.get(('stub', scen, hp), [])
        if not d and not h:
            continue
        dops, hops = med(d, 'ops_per_s'), med(h, 'ops_per_s')
        dcpu, hcpu = med(d, 'cpu_us_per_op'), med(h, 'cpu_us_per_op')
        dp99, hp99 = med(d, 'p99_us'), med(h, 'p99_us')
        def mark(a, b, ok):
            return judged(a, b, ok) if judge else ratio(a, b)
        lines.append(f'| {label} | {listener} | {fmt(dops)} | {fmt(hops)} | {mark(dops, hops, lambda x: x >= 1.0)} | '
                     f'{fmt(dcpu, 1)} | {fmt(hcpu, 1)} | {mark(dcpu, hcpu, lambda x: x <= 1.0)} | '
                     f'{fmt(dp99)} | {fmt(hp99)} | {mark(dp99, hp99, lambda x: x <= 1.1)} | {good(d)}/{good(h)} |')
    return lines
columns = ('| {} | listener | docguard ops/s | HAProxy ops/s | throughput | docguard CPU µs/op | '
           'HAProxy CPU µs/op | CPU per op | docguard p99 µs | HAProxy p99 µs | p99 | runs (docguard/HAProxy) |')
rule = '|{}|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
conn_scen, insert_scen = {}, {}
for (series, scen, target) in rows:
    if series != 'stub':
        continue
    first = rows[(series, scen, target)][0]
    if scen.startswith('small-') or scen.startswith('conns-'):
        conn_scen[int(first['conns'])] = scen
    elif scen.startswith('insert-'):
        insert_scen[int(first['doc_bytes'])] = scen
        insert_conns = first['conns']
targets_text = 'throughput >= 1.00x, CPU per operation <= 1.00x, p99 <= 1.10x'
summary = []
summary.append('## docguard against HAProxy, stub upstream\n')
summary.append(f'**Small operations.** docguard warn (all rules) against HAProxy 2.6 (TCP mode) on the same kind of listener; '
               f'ratios of the medians over $rounds round(s) of ${secs}s, targets interleaved. '
               f'Targets: {targets_text} (met: ok, missed: MISSED). '
               f'CPU per operation: utime+stime of the proxy process over the measured window / operations.\n')
summary.append(columns.format('connections'))
summary.append(rule.format('---:'))
for conns in sorted(conn_scen):
    summary += compared(f'{conns:,}', conn_scen[conns], judge=True)
if insert_scen:
    summary.append(f'\n**Inserts** ({insert_conns} connections, one document per insert; reported side by side, '
                   f'no targets):\n')
    summary.append(columns.format('document'))
    summary.append(rule.format('---'))
    for size in sorted(insert_scen):
        label = f'{size / 2**20:g} MiB' if size >= 2**20 else f'{size / 2**10:g} KiB'
        summary += compared(label, insert_scen[size], judge=False)
if idle:
    summary.append('\n**Memory per idle connection** (RSS growth of the proxy process while the connections are held, '
                   'one hello each; reported side by side, no targets):\n')
    summary.append('| listener | connections held (docguard/HAProxy) | docguard bytes per connection | '
                   'HAProxy bytes per connection | docguard vs HAProxy |')
    summary.append('|---|---:|---:|---:|---:|')
    for listener, dg, hp in pairs:
        if dg not in idle and hp not in idle:
            continue
        held = '/'.join(f"{int(idle[t]['idle_connections']):,}" if 'idle_connections' in idle.get(t, {}) else 'failed'
                        for t in (dg, hp))
        d, h = idle_bytes(dg), idle_bytes(hp)
        summary.append(f'| {listener} | {held} | {fmt(d)} | {fmt(h)} | {ratio(d, h)} |')
summary_text = '\n'.join(summary) + '\n'
open(summary_path, 'w').write(summary_text)
text = '\n'.join(out) + '\n'
# The summary is printed last, after the charts, by the shell; the file has it at its end.
print(text)
open(out_path, 'w').write(text + '\n' + summary_text)
PY
echo "bench: report written to $build/results.md, numbers in $build/results.csv" >&2
# Charts: any python3 that has matplotlib (Debian's python3-matplotlib is /usr/bin/python3's).
plot_py=
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import matplotlib' 2>/dev/null; then plot_py=$p; break; fi
done
if [ -n "$plot_py" ]; then
  "$plot_py" tests/bench/plot.py "$build/results.csv" "$charts" >&2 || echo "bench: charts failed" >&2
else
  echo "bench: no charts: matplotlib not found (scripts/install-deps.sh --bench installs python3-matplotlib)" >&2
fi
# The comparison table last, where it is read first (results.md has it at its end too).
echo
cat "$build/summary.md"
echo "bench: comparison table written to $build/summary.md" >&2
