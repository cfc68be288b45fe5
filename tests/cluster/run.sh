#!/usr/bin/env bash
# Cluster suite: real drivers against the replica-set / several-mongos test double
# (tests/cluster/rs_double.py) in front of FerretDB, SCRAM, and mongodb+srv:// through a private DNS.
#
#   tests/cluster/run.sh [pytest args...]          e.g. tests/cluster/run.sh -k stepdown
#
# Installs nothing (scripts/install-deps.sh does: FerretDB, the venv, dnsmasq-base). pytest runs in
# a private mount namespace (unshare -m) where a resolv.conf naming a private loopback address is
# bind-mounted over /etc/resolv.conf; the tests serve SRV/TXT records there with dnsmasq. The
# machine's own resolver configuration is never touched. Without root a user + network namespace
# is used instead (unshare -r -n -m), where everything runs on a private loopback.
#
# Environment:
#   DOCGUARD_CLUSTER_VIA=docguard   run the same tests through docguard (DOCGUARD_BIN, default
#                                   build/bin/docguard) instead of against the double directly
#   DOCGUARD_CLUSTER_NO_SRV=1       no namespace, no DNS: the SRV test is skipped
#   DOCGUARD_CLUSTER_KEEP=1         keep the work dir with every log
#   DOCGUARD_CLUSTER_RECOVER_S      seconds a client may take to follow a failover (default 5)
#   CLUSTER_TIMEOUT                 seconds for the whole run (default 300)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export DOCGUARD_TOOLS="${DOCGUARD_TOOLS:-$root/.tools}"
py="$DOCGUARD_TOOLS/venv/bin/python"
fail() { echo "cluster/run.sh: $*" >&2; echo "cluster suite: FAIL (setup)"; exit 2; }
[ -x "$py" ] || fail "no Python venv at $py: run scripts/install-deps.sh"
[ -x "$DOCGUARD_TOOLS/bin/ferretdb" ] || fail "no FerretDB at $DOCGUARD_TOOLS/bin/ferretdb: run scripts/install-deps.sh"
if [ "${DOCGUARD_CLUSTER_VIA:-double}" = docguard ]; then
  export DOCGUARD_BIN="${DOCGUARD_BIN:-$root/build/bin/docguard}"
  [ -x "$DOCGUARD_BIN" ] || fail "no docguard at $DOCGUARD_BIN: build first"
fi

cmd=("$py" -m pytest tests/cluster -q "$@")
if [ "${DOCGUARD_CLUSTER_NO_SRV:-}" = 1 ]; then
  timeout --kill-after=10 "${CLUSTER_TIMEOUT:-300}" "${cmd[@]}"
  rc=$?
else
  command -v dnsmasq >/dev/null || [ -x /usr/sbin/dnsmasq ] ||
    fail "dnsmasq not found (Debian package dnsmasq-base): run scripts/install-deps.sh"
  export PATH="$PATH:/usr/sbin:/sbin"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  # A random address in 127/8 so that concurrent runs on one machine do not collide on port 53.
  export DOCGUARD_CLUSTER_DNS_IP="127.53.$((RANDOM % 254 + 1)).$((RANDOM % 254 + 1))"
  printf 'nameserver %s\noptions timeout:1 attempts:2\n' "$DOCGUARD_CLUSTER_DNS_IP" >"$tmp/resolv.conf"
  # Root: a mount namespace only. Otherwise (or where root lacks CAP_SYS_ADMIN, as in a default
  # Docker container) a user + network + mount namespace.
  if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
    ns=(unshare -m --propagation private) newnet=0
  elif unshare -r -n -m --propagation private true 2>/dev/null; then
    ns=(unshare -r -n -m --propagation private) newnet=1
  else
    fail "cannot create a mount namespace here (unshare -m, unshare -r -n -m) for the private DNS;" \
      "DOCGUARD_CLUSTER_NO_SRV=1 runs the rest"
  fi
  # Inside: mount the private resolv.conf; in a new network namespace, bring its loopback up.
  inner='mount --bind "$0" /etc/resolv.conf || exit 97
         if [ "$1" = 1 ]; then ip link set lo up || exit 97; fi
         shift; exec "$@"'
  timeout --kill-after=10 "${CLUSTER_TIMEOUT:-300}" "${ns[@]}" -- \
    sh -c "$inner" "$tmp/resolv.conf" "$newnet" "${cmd[@]}"
  rc=$?
  [ $rc = 97 ] && fail "could not set up the private namespace (${ns[*]}: mount --bind, ip link set lo up)"
fi
if [ $rc = 0 ]; then echo "cluster suite: PASS"; else echo "cluster suite: FAIL (exit $rc)"; fi
exit $rc
