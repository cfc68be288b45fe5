#!/usr/bin/env bash
# clang-tidy (.clang-tidy) over the product's C++ sources; a warning fails.
#
#   scripts/tidy.sh           the sources changed against origin/main, file by file (quick)
#   scripts/tidy.sh --all     every source of every layer (what CI runs: CI=true implies it)
#
# File by file, clang-tidy parses and walks each source's whole translation unit, the system
# headers' declarations included: most of its time is Asio's, Beast's and libstdc++'s
# declarations again for every source. --all therefore reads the sources in the same batches as
# the sanitizer builds' unity build (cmake/unity_build.cmake: 16 sources of a target to one
# translation unit), from a configure-only build directory (build-tidy): the same checks over the
# same code, in a fifth of the time. Inside a batch, the sources are included files, so the
# header filter names the layers' directories rather than their include/ folders, and
# bugprone-suspicious-include (a batch includes .cc files by design) is a grep instead. A batch
# sees a little more (a callee defined in another of its sources) and a little less: a
# namespace-scope using-declaration unused in its own source but used by a later source of the
# batch is not reported (misc-unused-using-decls); the per-file run reports it.
# Every product source must be in exactly one translation unit checked, or the step fails.
#
# Environment: DOCGUARD_JOBS (parallel clang-tidy processes, default 2).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs="${DOCGUARD_JOBS:-2}"
# The layers are the top-level folders that hold product sources, read from git so that a new
# layer is checked from its first commit (a hand-kept list would silently filter it out).
layers=$(git ls-files '*.cc' | grep -v '^tests/' | cut -d/ -f1 | sort -u | paste -sd'|')
filter_lines() {
  grep -v -E '^[0-9]+ warnings? generated|^Suppressed [0-9]+ warnings|^Use -header-filter|^$'
}

all=0
{ [ "${1:-}" = --all ] || [ "${CI:-}" = true ]; } && all=1

if ((all == 0)); then
  base=$(git merge-base HEAD origin/main 2>/dev/null || git rev-parse HEAD~1)
  files=$(git diff --name-only --diff-filter=AM "$base" -- '*.cc' | grep -v '^tests/' || true)
  [ -z "$files" ] && { echo "clang-tidy: no changed sources"; exit 0; }
  [ -f build/compile_commands.json ] || { echo "tidy.sh: build first (build/compile_commands.json)"; exit 2; }
  echo "clang-tidy: $(echo "$files" | wc -l) changed files"
  echo "$files" | xargs -P "$jobs" -n 4 clang-tidy -p build --quiet 2>&1 | filter_lines
  exit "${PIPESTATUS[1]}"
fi

cmake -S . -B build-tidy -G Ninja -DCMAKE_BUILD_TYPE=Debug -DDOCGUARD_TESTS=OFF \
  -DDOCGUARD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 >/dev/null || exit 2
# The translation units, and a check that they hold each product source once.
units=$(python3 - "$root" <<'PY'
import json, re, subprocess, sys
root = sys.argv[1]
db = json.load(open(f"{root}/build-tidy/compile_commands.json"))
units, covered = [], []
for entry in db:
    path = entry["file"]
    if path.startswith(f"{root}/tests/"):
        continue
    units.append(path)
    if "/Unity/unity_" in path:
        covered += re.findall(r'#include "([^"]+)"', open(path).read())
    else:
        covered.append(path)
sources = subprocess.run(["git", "ls-files", "*.cc"], capture_output=True, text=True,
                         cwd=root, check=True).stdout.split()
product = sorted(f"{root}/{s}" for s in sources if not s.startswith("tests/"))
missing = sorted(set(product) - set(covered))
twice = sorted({c for c in covered if covered.count(c) > 1})
if missing or twice:
    sys.exit(f"tidy.sh: sources not checked {missing}, checked twice {twice}")
print("\n".join(units))
PY
) || exit 2
if git grep -n -E '#include ".*\.cc"' -- '*.cc' '*.h' ':!tests'; then
  echo "tidy.sh: a source includes a .cc file (bugprone-suspicious-include)"
  exit 1
fi
echo "clang-tidy: $(git ls-files '*.cc' | grep -vc '^tests/') sources in $(echo "$units" | wc -l) translation units"
echo "$units" | xargs -P "$jobs" -n 1 clang-tidy -p build-tidy --quiet \
  --checks=-bugprone-suspicious-include --header-filter="^$root/($layers)/" 2>&1 | filter_lines
exit "${PIPESTATUS[1]}"
