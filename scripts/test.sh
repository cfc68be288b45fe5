#!/usr/bin/env bash
# Run all tests: install deps, build, unit tests (plain and ASan+UBSan), integration suites.
# Last line of output: "N passed, M failed" over the suites below. Exit non-zero on any failure.
#
# Environment: DOCGUARD_JOBS (parallel build jobs, default 2), DOCGUARD_SKIP_ASAN=1 (skip the
# sanitizer build), DOCGUARD_SKIP_INSTALL=1 (do not run scripts/install-deps.sh).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs="${DOCGUARD_JOBS:-2}"
results=()
record() { results+=("$1 $2"); echo ">>> $1: $2"; }

summary() {
  local p=0 f=0
  echo
  echo "=============== summary ==============="
  for r in "${results[@]}"; do
    printf '  %-32s %s\n' "${r% *}" "${r##* }"
    if [ "${r##* }" = PASS ]; then p=$((p + 1)); else f=$((f + 1)); fi
  done
  echo "$p passed, $f failed"
  [ "$f" -eq 0 ]
}

step() {  # step NAME command...
  local name=$1
  shift
  echo
  echo "=============== $name ==============="
  if "$@"; then record "$name" PASS; return 0; else record "$name" FAIL; return 1; fi
}

if [ "${DOCGUARD_SKIP_INSTALL:-}" != 1 ]; then
  if ! step install-deps bash scripts/install-deps.sh; then summary; exit 1; fi
fi

step clang-format bash -c "git ls-files '*.cc' '*.h' | xargs clang-format --dry-run --Werror"

# clang-tidy (.clang-tidy) on the C++ sources changed against origin/main, when installed:
# quick because it reads only what changed (needs build/compile_commands.json, made below).
tidy_changed() {
  local base files
  base=$(git merge-base HEAD origin/main 2>/dev/null || git rev-parse HEAD~1)
  files=$(git diff --name-only --diff-filter=AM "$base" -- '*.cc' | grep -v '^tests/' || true)
  [ -z "$files" ] && return 0
  # shellcheck disable=SC2086
  clang-tidy -p build --quiet $files
}

build_ok=0
step build bash -c "cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDOCGUARD_WERROR=ON && ninja -C build -j $jobs" &&
  build_ok=1
if ((build_ok)) && command -v clang-tidy >/dev/null; then
  step clang-tidy tidy_changed
fi
if ((build_ok)); then
  step unit-tests ctest --test-dir build --output-on-failure -j "$jobs"
else
  record unit-tests FAIL
fi

if [ "${DOCGUARD_SKIP_ASAN:-}" != 1 ]; then
  if step build-asan bash -c "cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
      -DDOCGUARD_SANITIZE=ON -DDOCGUARD_WERROR=ON -DDOCGUARD_BENCH=OFF && ninja -C build-asan -j $jobs"; then
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      step unit-tests-asan ctest --test-dir build-asan --output-on-failure -j "$jobs"
    # The PyMongo integration suite against the sanitized proxy: a sanitizer report aborts
    # docguard, which fails the tests that use it.
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      DOCGUARD_BIN="$root/build-asan/bin/docguard" \
      step integration-asan bash tests/integration/run.sh python
  else
    record unit-tests-asan FAIL
  fi
fi

if [ "${DOCGUARD_SKIP_TSAN:-}" != 1 ]; then
  # The threaded parts: the rules engine is shared by every io thread (its tests run inspections
  # from several threads at once).
  if step build-tsan bash -c "cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
      -DDOCGUARD_TSAN=ON -DDOCGUARD_WERROR=ON -DDOCGUARD_BENCH=OFF >/dev/null && ninja -C build-tsan -j $jobs rules_tests"; then
    TSAN_OPTIONS=halt_on_error=1 step unit-tests-tsan build-tsan/tests/unit/rules/rules_tests
  else
    record unit-tests-tsan FAIL
  fi
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

step deploy-files .tools/venv/bin/python -m pytest -q -p no:cacheprovider tests/deploy

if [ "${DOCGUARD_SKIP_FUZZ:-}" != 1 ]; then
  step fuzz-smoke env FUZZ_RUNS="${FUZZ_RUNS:-300000}" bash scripts/fuzz.sh
fi

summary
