#!/usr/bin/env bash
# The instruction guard: user-space instructions per message through decode, rules, the live
# advisor, metrics and the conversation (docguard_message_path), counted by valgrind, against the
# checked-in baseline. Counted, not timed: the same binary gives the same count on a busy machine.
# Each message runs with N=1 and N=1+K; (Ir(1+K) - Ir(1)) / K leaves start-up out.
#
# Fails when a message costs more than 10% over its baseline, and when the workload ledger and
# the guardrail together add more to a small find (find_guardrail less find_bare) than their
# budget in the baseline file: a fixed number of instructions, 10% of the bare find the rule was
# first held to (4,669). A budget in instructions, not a share of today's find: a share would
# shrink each time the rest of the find gets cheaper, and fail the ledger for work it did not
# add. Rewriting the baseline keeps the budget; lowering it is a decision of its own.
# After a change that is meant to cost more (or that saves enough to tighten the guard), write
# the new baseline and say why in the commit:
#   UPDATE_BASELINE=1 ctest --test-dir build -R instruction_counts --output-on-failure
#
# Usage: instruction_guard.sh DRIVER BASELINE_FILE BUILD_TYPE COMPILER
# Exit 77 (ctest: skipped) without valgrind, or when the build is not the one the baseline was
# counted with (another build type or compiler gives other counts, not a regression).
set -euo pipefail
driver=$1
baseline=$2
build=$3
compiler=$4
limit_percent=10
tag="# build: $build, $compiler"

if ! command -v valgrind >/dev/null; then
  echo "skipped: valgrind is not installed"
  exit 77
fi
if [ "${UPDATE_BASELINE:-}" != 1 ] && ! grep -qxF "$tag" "$baseline"; then
  echo "skipped: $baseline was counted with another build ($(grep '^# build:' "$baseline" || true));"
  echo "this is '$tag'"
  exit 77
fi

# K per message: enough to average the live advisor's 1-in-8 sampling exactly (multiples of 8)
# and to dwarf the first message's one-off work, few enough to stay within seconds.
declare -A repeat=([small_insert]=200 [find]=200 [insert_1mib]=8 [bulk_push_update]=24 [schema_insert]=200 [unvalidated_insert]=200 [tracked_push_update]=24
  [find_guardrail]=200 [update_guardrail]=200 [find_bare]=200 [find_ledger]=200 [insert_find]=200)

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
instructions() {  # instructions MESSAGE N: total user-space instructions of one run
  valgrind --tool=cachegrind --cache-sim=no --branch-sim=no \
    --cachegrind-out-file="$out/cg.$1.$2" "$driver" "$1" "$2" >/dev/null 2>"$out/log.$1.$2" || {
    echo "$driver $1 $2 failed:" >&2
    cat "$out/log.$1.$2" >&2
    exit 1
  }
  sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$out/cg.$1.$2"
}

declare -A now
for m in $("$driver" list); do
  k=${repeat[$m]}
  one=$(instructions "$m" 1)
  many=$(instructions "$m" $((k + 1)))
  now[$m]=$(((many - one) / k))
done

budget=$(awk '$1 == "ledger_guardrail_budget" { print $2 }' "$baseline")
if [ -z "$budget" ]; then
  echo "$baseline has no ledger_guardrail_budget line" >&2
  exit 1
fi

if [ "${UPDATE_BASELINE:-}" = 1 ]; then
  {
    echo "# User-space instructions per message (tests/instructions/instruction_guard.sh)."
    echo "# Written by: UPDATE_BASELINE=1 ctest --test-dir build -R instruction_counts"
    echo "$tag"
    for m in $("$driver" list); do echo "$m ${now[$m]}"; done
    echo "# What the workload ledger and the guardrail together may add to a small find"
    echo "# (find_guardrail less find_bare): kept as it was when the baseline is rewritten."
    echo "ledger_guardrail_budget $budget"
  } >"$baseline"
  echo "baseline written to $baseline:"
  grep -v '^#' "$baseline"
  exit 0
fi

failed=0
printf '%-18s %12s %12s %8s\n' message baseline now change
for m in $("$driver" list); do
  base=$(awk -v m="$m" '$1 == m { print $2 }' "$baseline")
  if [ -z "$base" ]; then
    printf '%-18s %12s %12d %8s  no baseline\n' "$m" - "${now[$m]}" -
    failed=1
    continue
  fi
  change=$(awk -v b="$base" -v n="${now[$m]}" 'BEGIN { printf "%+.1f%%", (n - b) * 100 / b }')
  verdict=""
  if ((now[$m] * 100 > base * (100 + limit_percent))); then
    verdict="  more than ${limit_percent}% over the baseline"
    failed=1
  elif ((now[$m] * 100 < base * (100 - limit_percent))); then
    verdict="  well under: tighten the guard with UPDATE_BASELINE=1"
  fi
  printf '%-18s %12d %12d %8s%s\n' "$m" "$base" "${now[$m]}" "$change" "$verdict"
done
# The workload ledger and the guardrail together, against the same find with neither (find_bare):
# at most their budget.
bare=${now[find_bare]}
both=${now[find_guardrail]}
added=$((both - bare))
echo "find_guardrail adds $added instructions to find_bare ($(awk -v b="$bare" -v n="$both" 'BEGIN { printf "%+.1f%%", (n - b) * 100 / b }'); the ledger and the guardrail; at most $budget)"
if ((added > budget)); then
  echo "the ledger and the guardrail add more than their budget of $budget instructions to a bare find"
  failed=1
fi
exit $failed
