#!/usr/bin/env bash
# Builds mongobetween (coinbase/mongobetween, Go, Apache-2.0) for scripts/bench.sh, outside the
# repository's sources: its code is never committed here.
#
#   scripts/build-mongobetween.sh SRC_DIR     # a checkout of github.com/coinbase/mongobetween
#
# The Go module proxy refuses the module itself (`go install github.com/coinbase/mongobetween@latest`
# answers 403 Forbidden) but serves all its dependencies, so get the source another way (git clone,
# a release tarball) and build it here: `CGO_ENABLED=0 go build` takes about a minute.
# Installs to $DOCGUARD_TOOLS/bin/mongobetween (default .tools/bin), where bench.sh looks for it;
# or point MONGOBETWEEN_BIN at any binary.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
src=${1:?usage: scripts/build-mongobetween.sh SRC_DIR (a checkout of github.com/coinbase/mongobetween)}
tools="${DOCGUARD_TOOLS:-$here/.tools}"
[ -f "$src/go.mod" ] && grep -q 'coinbase/mongobetween' "$src/go.mod" ||
  { echo "build-mongobetween: $src is not a mongobetween checkout" >&2; exit 1; }
mkdir -p "$tools/bin"
(cd "$src" && CGO_ENABLED=0 go build -o "$tools/bin/mongobetween" .)
echo "build-mongobetween: $tools/bin/mongobetween"
