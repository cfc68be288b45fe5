#!/usr/bin/env bash
# Build and run the demo: FerretDB on a local port, docguard in front of it, a short PyMongo
# workload through docguard, then where to look. Runs until Ctrl-C (--once: exit after the workload).
#
#   scripts/demo.sh [--once]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
once=0
for arg in "$@"; do
  case $arg in
    --once) once=1 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "demo.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done

bash scripts/install-deps.sh || { echo "demo.sh: installing dependencies failed" >&2; exit 1; }
{ cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
  ninja -C build -j "${DOCGUARD_JOBS:-2}" docguard; } || { echo "demo.sh: build failed" >&2; exit 1; }

py="$root/.tools/venv/bin/python"
work="$root/.run/demo"
rm -rf "$work"
mkdir -p "$work"
config=none
[ -f config/docguard.example.yaml ] && config="$root/config/docguard.example.yaml"

harness_pid=""
cleanup() {
  if [ -n "$harness_pid" ] && kill -0 "$harness_pid" 2>/dev/null; then
    kill -TERM "$harness_pid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$harness_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$harness_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap 'echo; echo "demo.sh: stopping"; exit 0' INT TERM

DOCGUARD_BIN="$root/build/bin/docguard" "$py" tests/integration/python/harness.py serve \
  --workdir "$work" --env-file "$work/env" --config "$config" --log-format text \
  >"$work/harness.log" 2>&1 &
harness_pid=$!
for _ in $(seq 1 600); do
  [ -f "$work/env" ] && break
  kill -0 "$harness_pid" 2>/dev/null || break
  sleep 0.1
done
if [ ! -f "$work/env" ]; then
  echo "demo.sh: FerretDB/docguard did not start:" >&2
  cat "$work/harness.log" >&2
  exit 1
fi
set -a
. "$work/env"
set +a

echo
echo "FerretDB : $FERRETDB_URI  (log $FERRETDB_LOG)"
echo "docguard : $DOCGUARD_URI  (config: $config)"
echo
echo "--- sample workload through docguard (scripts/sample_workload.py) ---"
"$py" scripts/sample_workload.py "$DOCGUARD_URI" || { echo "demo.sh: the workload failed" >&2; exit 1; }
echo
echo "--- where to look ---"
echo "  docguard log:  $DOCGUARD_LOG"
echo "  metrics:       curl http://$DOCGUARD_ADMIN/metrics"
echo "  status:        curl http://$DOCGUARD_ADMIN/status"
echo "  advice:        http://$DOCGUARD_ADMIN/report (page), curl http://$DOCGUARD_ADMIN/report.json"
echo "  dump scan:     build/bin/docguard scan tests/fixtures/dumps/shop/shop.archive.gz"
echo "  health:        curl http://$DOCGUARD_ADMIN/healthz"
echo "  connect:       .tools/venv/bin/python -c 'import pymongo; print(pymongo.MongoClient(\"$DOCGUARD_URI\").shop.products.count_documents({}))'"
echo "                 (or: cd tests/integration/node && npx mongosh $DOCGUARD_URI/shop)"
echo
echo "--- design-rule violations in docguard's log ---"
grep -h "design rule violated" "$root"/.run/demo/docguard-*.log 2>/dev/null | tail -5 || true
echo
echo "--- docguard metrics (excerpt) ---"
curl -s "http://$DOCGUARD_ADMIN/metrics" |
  grep -E '^docguard_(violations_total|reads_with_lookup_total|reads_total|array_length_max|array_length_bound|document_size_bytes_count|commands_total\{.*(insert|update))' |
  head -25
echo
echo "--- /status (per collection) ---"
curl -s "http://$DOCGUARD_ADMIN/status" | head -c 1500
echo
if ((once)); then
  exit 0
fi
echo
echo "docguard and FerretDB keep running; press Ctrl-C to stop."
while kill -0 "$harness_pid" 2>/dev/null; do sleep 1; done
echo "demo.sh: docguard or FerretDB exited:" >&2
cat "$work/harness.log" >&2
exit 1
