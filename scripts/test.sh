#!/usr/bin/env bash
# Run all tests: install deps, build, unit tests (plain and ASan+UBSan), integration suites.
# Last line of output: "N passed, M failed in T min" over the steps below. Exit non-zero on any failure.
#
# Environment: DOCGUARD_JOBS (parallel build jobs, default 2), DOCGUARD_SKIP_ASAN=1 (skip the
# sanitizer build), DOCGUARD_SKIP_TSAN=1 (skip the ThreadSanitizer build and its runs),
# DOCGUARD_SKIP_INSTALL=1 (do not run scripts/install-deps.sh).
#
# Lanes. After the release build, the steps run in lanes side by side: the release binary's tests
# in the foreground; the ASan+UBSan build and its tests, and the TSan build and its tests, each in
# a lane of its own; clang-tidy and the fuzz smoke beside them. The integration suites mostly
# wait on sockets and sleeps (a fifth of the machine's CPU), so run one after another they left
# the cores idle for most of the run. Priorities keep the waiting suites from being slowed: the
# sanitizer builds run at nice 10 (ASan, the longer lane) and 13 (TSan), clang-tidy and the fuzz
# smoke at nice 19, the tests at the normal priority. The machine is then busy to the end: what
# counts is the work done, and an order that starts the longest lane first. (Started beside the
# release build, the lanes took CPU from it and the run was a minute longer.) Each lane writes
# its own log, shown when it is collected, and its suites take their own slice of the free ports
# (DOCGUARD_PORT_SLICE).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs="${DOCGUARD_JOBS:-2}"
results_file=$(mktemp)  # "NAME PASS|FAIL SECONDS" per step, from every lane
trap 'rm -f "$results_file"' EXIT
step_started=$SECONDS
record() {  # record NAME PASS|FAIL: the time since the previous record is the step's
  echo "$1 $2 $((SECONDS - step_started))s" >>"$results_file"
  step_started=$SECONDS
  echo ">>> $1: $2"
}

summary() {
  local p=0 f=0 name res took
  echo
  echo "=============== summary ==============="
  while read -r name res took; do
    printf '  %-32s %s %6s\n' "$name" "$res" "$took"
    if [ "$res" = PASS ]; then p=$((p + 1)); else f=$((f + 1)); fi
  done <"$results_file"
  echo "$p passed, $f failed in $((SECONDS / 60)) min"
  [ "$f" -eq 0 ]
}

step() {  # step NAME command...
  local name=$1
  shift
  echo
  echo "=============== $name ==============="
  step_started=$SECONDS
  if "$@"; then record "$name" PASS; return 0; else record "$name" FAIL; return 1; fi
}

if [ "${DOCGUARD_SKIP_INSTALL:-}" != 1 ]; then
  if ! step install-deps bash scripts/install-deps.sh; then summary; exit 1; fi
fi

step clang-format bash -c "git ls-files '*.cc' '*.h' | xargs clang-format --dry-run --Werror"

# A background job: a single step (clang-tidy, the fuzz smoke) or a lane of steps, which record
# their own results. Its output goes to its own log, shown when it is collected.
background_pids=()
background_names=()
background_logs=()
background() {  # background NAME command...
  local name=$1 log
  shift
  log=$(mktemp)
  echo ">>> $name: started beside the foreground steps (log: $log)"
  # The exit status is written last: a job that ends without it (killed, out of memory) may
  # have steps it never recorded, and is recorded as failed when collected.
  { "$@"; echo $? >"$log.rc"; } >"$log" 2>&1 &
  background_pids+=($!)
  background_names+=("$name")
  background_logs+=("$log")
}
background_step() {  # background_step NAME command...: one step, at the lowest priority
  local name=$1
  shift
  background "$name" step "$name" nice -n 19 "$@"
}
collect_background() {
  local i
  for i in "${!background_pids[@]}"; do
    wait "${background_pids[$i]}"
    echo
    echo "=============== ${background_names[$i]} (ran beside the foreground) ==============="
    cat "${background_logs[$i]}"
    if [ ! -f "${background_logs[$i]}.rc" ]; then
      echo "${background_names[$i]} FAIL unfinished" >>"$results_file"
      echo ">>> ${background_names[$i]}: ended before it finished"
    fi
    rm -f "${background_logs[$i]}" "${background_logs[$i]}.rc"
  done
}

# Line tables only (-g1), not full debug info: enough for a sanitizer's or a debugger's stack
# trace, and a fifth less compile time for the Asio-heavy sources. Code generation is unchanged
# (the instruction guard counts the same). Precompiled GoogleTest and Asio headers for the unit
# tests (DOCGUARD_PCH) take a fifth to a half off each test's source; gold links in two thirds
# of the time of the default linker. Neither changes the product's code.
#
# The sanitizer builds (Debug, -O0) are unity builds (cmake/unity_build.cmake): 16 sources of a
# target to a translation unit, so the headers they share are parsed once per batch, not once
# per file; at -O0 a batch's code is its files' code. The release build compiles the product file
# by file: its binary is the one the instruction guard counts, and it proves each file includes
# what it uses; its unit test executables are batched (DOCGUARD_UNITY_TESTS).
# clang-tidy reads the same batches from a configure-only build directory (scripts/tidy.sh).
line_info=-g1
fast_build=(-DDOCGUARD_PCH=ON -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=gold)
unity_build=(-DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16)
build_ok=0
step build bash -c "cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDOCGUARD_WERROR=ON ${fast_build[*]} -DDOCGUARD_UNITY_TESTS=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO='-O2 $line_info -DNDEBUG' && ninja -C build -j $jobs" &&
  build_ok=1
# clang-tidy over every layer's sources (scripts/tidy.sh: in the unity build's batches under CI).
if command -v clang-tidy >/dev/null; then
  background_step clang-tidy env DOCGUARD_JOBS="$jobs" bash scripts/tidy.sh --all
fi
if [ "${DOCGUARD_SKIP_FUZZ:-}" != 1 ]; then
  background_step fuzz-smoke env FUZZ_RUNS="${FUZZ_RUNS:-300000}" bash scripts/fuzz.sh
fi

# ThreadSanitizer over the whole proxy: io threads share the rules engine, and libmongoc's monitor
# threads call back into docguard (topology events). TSan writes its reports to files (log_path)
# so that a report from a docguard the harness stops is not lost; any report fails the step.
# cluster/tsan.supp: libmongoc/libbson internals TSan cannot see (the library is not instrumented).
tsan_step() {  # tsan_step NAME command...
  local name=$1 dir
  shift
  dir=$(mktemp -d)
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/cluster/tsan.supp:log_path=$dir/tsan" \
    step "$name" bash -c '"$@"; rc=$?
      if ls "$0"/tsan.* >/dev/null 2>&1; then
        echo "ThreadSanitizer reports:"; cat "$0"/tsan.*; exit 1
      fi
      exit $rc' "$dir" "$@"
  local rc=$?
  rm -rf "$dir"
  return $rc
}
# The ASan+UBSan lane: the sanitizer build, the unit tests, and the PyMongo integration suite
# against the sanitized proxy: a sanitizer report aborts docguard, which fails the tests that use
# it. A smaller quarantine (freed memory held back to catch use-after-free) keeps the tests'
# memory bounds meaningful: they add its size.
asan_lane() {
  if step build-asan nice -n 10 bash -c "cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
      -DCMAKE_CXX_FLAGS_DEBUG=$line_info -DDOCGUARD_SANITIZE=ON -DDOCGUARD_WERROR=ON -DDOCGUARD_BENCH=OFF ${fast_build[*]} ${unity_build[*]} && ninja -C build-asan -j $jobs"; then
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      step unit-tests-asan ctest --test-dir build-asan --output-on-failure -j "$jobs"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:quarantine_size_mb=32 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      DOCGUARD_BIN="$root/build-asan/bin/docguard" DOCGUARD_PORT_SLICE=1/3 \
      step integration-asan bash tests/integration/run.sh python
  else
    record unit-tests-asan FAIL
  fi
}

# The TSan lane: the rules' unit tests, the PyMongo suite and the cluster suite (failover under
# load, stepdowns, killed members, several mongos, SCRAM, SRV) through the sanitized docguard.
tsan_lane() {
  if step build-tsan nice -n 13 bash -c "cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
      -DCMAKE_CXX_FLAGS_DEBUG=$line_info -DDOCGUARD_TSAN=ON -DDOCGUARD_WERROR=ON -DDOCGUARD_BENCH=OFF ${fast_build[*]} ${unity_build[*]} >/dev/null && ninja -C build-tsan -j $jobs docguard rules_tests"; then
    tsan_step unit-tests-tsan build-tsan/tests/unit/rules/rules_tests
    export DOCGUARD_BIN="$root/build-tsan/bin/docguard" DOCGUARD_PORT_SLICE=2/3
    tsan_step integration-tsan bash tests/integration/run.sh python
    DOCGUARD_CLUSTER_VIA=docguard tsan_step cluster-tsan bash tests/cluster/run.sh
  else
    record unit-tests-tsan FAIL
  fi
}
[ "${DOCGUARD_SKIP_ASAN:-}" = 1 ] || background asan-lane asan_lane
[ "${DOCGUARD_SKIP_TSAN:-}" = 1 ] || background tsan-lane tsan_lane

# The foreground lane: the release binary's unit tests and every suite through it.
export DOCGUARD_PORT_SLICE=0/3
if ((build_ok)); then
  step unit-tests ctest --test-dir build --output-on-failure -j "$jobs"
else
  record unit-tests FAIL
fi

if ((build_ok)); then
  it_results=$(mktemp)
  echo
  echo "=============== integration ==============="
  DOCGUARD_IT_RESULTS="$it_results" bash tests/integration/run.sh
  it_rc=$?
  while read -r _ name res; do record "$name" "$res"; done <"$it_results"
  # run.sh failed before it could report any suite (e.g. docguard did not start)
  if [ "$it_rc" -ne 0 ] && ! grep -q FAIL "$it_results"; then record integration FAIL; fi
  rm -f "$it_results"
else
  record integration FAIL
fi

if ((build_ok)); then step faults bash tests/faults/run.sh; else record faults FAIL; fi

# Real drivers (PyMongo, Node, libmongoc) against the replica-set / mongos test double,
# first directly (the double is a faithful cluster), then through docguard.
step cluster-double bash tests/cluster/run.sh
if ((build_ok)); then
  DOCGUARD_CLUSTER_VIA=docguard DOCGUARD_BIN="$root/build/bin/docguard" \
    step cluster-docguard bash tests/cluster/run.sh
else
  record cluster-docguard FAIL
fi

step deploy-files .tools/venv/bin/python -m pytest -q -p no:cacheprovider tests/deploy

collect_background

summary
