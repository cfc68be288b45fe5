#!/usr/bin/env bash
# Deterministic cost of one small insert through decode + all rules: runs bench_one_insert under
# callgrind with 1 and 1+K messages and prints (Ir(1+K) - Ir(1)) / K, so start-up is excluded.
# Usage: tests/bench/callgrind_one_insert.sh [BUILD_DIR] [K] [SCOPED_RULES]
set -euo pipefail
build=${1:-build-bench}
k=${2:-1000}
scoped=${3:-0}
bin="$build/bin/bench_one_insert"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ir() {
  valgrind --tool=callgrind --callgrind-out-file="$out/cg.$1" "$bin" "$1" "$scoped" >/dev/null \
    2>"$out/log.$1"
  sed -n 's/^summary: //p' "$out/cg.$1"
}
one=$(ir 1)
many=$(ir $((k + 1)))
per=$(( (many - one) / k ))
echo "callgrind: decode + all rules (+$scoped scoped), one ~200-byte insert: $per instructions per message (K=$k)"
if [ -n "${CALLGRIND_TOP:-}" ]; then
  callgrind_annotate --inclusive=no "$out/cg.$((k + 1))" 2>/dev/null | sed -n '1,40p'
fi
