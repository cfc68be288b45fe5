#!/usr/bin/env bash
# Integration suites through docguard against FerretDB v1.24 (SQLite), with real drivers.
#
#   tests/integration/run.sh [python|node|mongosh|go|c ...]     (default: all suites)
#
# Starts FerretDB + docguard once on free 127.0.0.1 ports (tests/integration/python/harness.py
# serve), runs each suite against docguard, prints a per-suite summary and exits non-zero if any
# suite failed. Everything it starts is stopped on exit.
#
# Environment:
#   DOCGUARD_BIN         docguard binary (default build/bin/docguard)
#   DOCGUARD_DIRECT=1    no docguard: run the suites against FerretDB directly (validates the tests)
#   DOCGUARD_IT_RESULTS  file to append "SUITE <name> PASS|FAIL" lines to (used by scripts/test.sh)
#   DOCGUARD_IT_KEEP=1   keep the work dir (logs) after the run
#   SUITE_TIMEOUT        seconds per suite (default 600)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
tools="${DOCGUARD_TOOLS:-$root/.tools}"
py="$tools/venv/bin/python"
export DOCGUARD_BIN="${DOCGUARD_BIN:-$root/build/bin/docguard}"
suite_timeout="${SUITE_TIMEOUT:-600}"
all_suites=(python node mongosh go c)
suites=("$@")
((${#suites[@]})) || suites=("${all_suites[@]}")

die() { echo "run.sh: $*" >&2; exit 2; }
[ -x "$py" ] || die "no Python venv at $tools/venv: run scripts/install-deps.sh"
[ -x "$tools/bin/ferretdb" ] || die "no FerretDB at $tools/bin/ferretdb: run scripts/install-deps.sh"
if [ "${DOCGUARD_DIRECT:-}" != 1 ] && [ ! -x "$DOCGUARD_BIN" ]; then
  die "docguard binary not found at $DOCGUARD_BIN (build first, or DOCGUARD_DIRECT=1 to test FerretDB directly)"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/docguard-it.XXXXXX")
harness_pid=""
cleanup() {
  if [ -n "$harness_pid" ] && kill -0 "$harness_pid" 2>/dev/null; then
    kill -TERM "$harness_pid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$harness_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$harness_pid" 2>/dev/null || true
  fi
  if [ "${DOCGUARD_IT_KEEP:-}" = 1 ]; then
    echo "run.sh: logs kept in $work"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

direct_flag=()
[ "${DOCGUARD_DIRECT:-}" = 1 ] && direct_flag=(--direct)
"$py" tests/integration/python/harness.py serve --workdir "$work" --env-file "$work/env" \
  "${direct_flag[@]}" >"$work/harness.log" 2>&1 &
harness_pid=$!
for _ in $(seq 1 600); do  # up to 60 s
  [ -f "$work/env" ] && break
  kill -0 "$harness_pid" 2>/dev/null || break
  sleep 0.1
done
if [ ! -f "$work/env" ]; then
  echo "run.sh: FerretDB/docguard did not start:" >&2
  cat "$work/harness.log" >&2
  for f in "$work"/*.log; do [ -f "$f" ] && { echo "== $f" >&2; tail -20 "$f" >&2; }; done
  exit 1
fi
set -a
# shellcheck disable=SC1091
. "$work/env"
set +a
echo "run.sh: FerretDB at $FERRETDB_URI; clients use $DOCGUARD_URI" \
  "${DOCGUARD_ADMIN:+(admin http://$DOCGUARD_ADMIN, log $DOCGUARD_LOG)}"

mkdir -p "$root/build/integration"
run_suite() {
  local name=$1
  case $name in
    python)
      timeout "$suite_timeout" "$py" -m pytest -q -p no:cacheprovider tests/integration/python ;;
    node)
      (cd tests/integration/node && timeout "$suite_timeout" node --test --test-concurrency=1 driver.test.mjs rules.test.mjs json_schema.test.mjs guardrail.test.mjs scram.test.mjs unix_socket.test.mjs) ;;
    mongosh)
      (cd tests/integration/node && timeout "$suite_timeout" node --test mongosh.test.mjs) ;;
    go)
      (cd tests/integration/go && timeout "$suite_timeout" nice go test -count=1 -p 1 ./...) ;;
    c)
      local exe="$root/build/integration/mongoc_smoke"
      # shellcheck disable=SC2046
      nice cc -O1 -Wall -o "$exe" tests/integration/c/mongoc_smoke.c $(pkg-config --cflags --libs libmongoc-1.0) &&
        timeout "$suite_timeout" "$exe" "$DOCGUARD_URI" ;;
    *)
      echo "unknown suite $name (known: ${all_suites[*]})"; return 2 ;;
  esac
}

declare -A result
declare -A secs
failed=0
for s in "${suites[@]}"; do
  echo
  echo "=============== suite: $s ==============="
  t0=$SECONDS
  if run_suite "$s"; then result[$s]=PASS; else result[$s]=FAIL; failed=$((failed + 1)); fi
  secs[$s]=$((SECONDS - t0))
  [ -n "${DOCGUARD_IT_RESULTS:-}" ] && echo "SUITE integration-$s ${result[$s]}" >>"$DOCGUARD_IT_RESULTS"
done

# docguard must have survived every suite (malformed frames included)
alive=PASS
if ! kill -0 "$harness_pid" 2>/dev/null; then
  alive=FAIL
  failed=$((failed + 1))
  echo "run.sh: docguard or FerretDB exited during the run:" >&2
  cat "$work/harness.log" >&2
fi
[ -n "${DOCGUARD_IT_RESULTS:-}" ] && echo "SUITE integration-still-running $alive" >>"$DOCGUARD_IT_RESULTS"

echo
echo "=============== integration summary ==============="
for s in "${suites[@]}"; do printf '  %-10s %s  (%ss)\n' "$s" "${result[$s]}" "${secs[$s]}"; done
printf '  %-10s %s\n' "alive" "$alive"
if [ -n "${DOCGUARD_LOG:-}" ] && [ -f "$DOCGUARD_LOG" ] && [ "${DOCGUARD_IT_KEEP:-}" != 1 ]; then
  # One copy per binary's build (build/bin/docguard: docguard.log), as the sanitizer builds' suites
  # may run beside this one.
  build_name=$(basename "$(dirname "$(dirname "$DOCGUARD_BIN")")")
  log_name=docguard.log
  [ "$build_name" = build ] || log_name="docguard-$build_name.log"
  cp "$DOCGUARD_LOG" "$root/build/integration/$log_name" 2>/dev/null &&
    echo "  docguard log: build/integration/$log_name"
fi
total=$((${#suites[@]} + 1))
echo "$((total - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
