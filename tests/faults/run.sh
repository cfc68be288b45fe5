#!/usr/bin/env bash
# Fault-injection and "nothing lost" suites, loopback only.
#
#   tests/faults/run.sh [pytest args...]        e.g. tests/faults/run.sh -k slowloris
#
# Starts its own FerretDB and docguard instances on free 127.0.0.1 ports (via
# tests/integration/python/harness.py) and stops them. Prints pytest's summary; exits non-zero if
# any test failed (strict xfails are known docguard bugs: one that starts passing fails the run).
#
# Environment:
#   DOCGUARD_BIN                  docguard binary (default build/bin/docguard)
#   DOCGUARD_FAULTS_SEED=N        seed of the nothing-lost workload (printed by every run)
#   DOCGUARD_FAULTS_CONNECTIONS   connections held at once (default 10000; capped by ulimit -n)
#   DOCGUARD_FAULTS_KEEP=1        keep the work dir (logs of every docguard started)
#   FAULTS_TIMEOUT                seconds for the whole run (default 600)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
py="${DOCGUARD_TOOLS:-$root/.tools}/venv/bin/python"
export DOCGUARD_BIN="${DOCGUARD_BIN:-$root/build/bin/docguard}"
[ -x "$py" ] || { echo "faults/run.sh: no Python venv at $py: run scripts/install-deps.sh" >&2; exit 2; }
[ -x "$DOCGUARD_BIN" ] || { echo "faults/run.sh: no docguard at $DOCGUARD_BIN: build first" >&2; exit 2; }
# docguard needs 2 descriptors per client connection; ask for the most the hard limit allows.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
timeout --kill-after=10 "${FAULTS_TIMEOUT:-600}" "$py" -m pytest tests/faults -q "$@"
