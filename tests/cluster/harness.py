"""Processes for the cluster tests: FerretDB (optionally with SCRAM users), the replica-set double,
a private DNS server (dnsmasq) for mongodb+srv://, and the target clients talk to.

Reuses tests/integration/python/harness.py (free ports, spawning with PR_SET_PDEATHSIG, bounded
waits). Every wait here is bounded too.

Private DNS: tests/cluster/run.sh picks a loopback address, writes a resolv.conf naming it and runs
pytest under `unshare -m --propagation private` with that file bind-mounted over /etc/resolv.conf,
exporting DOCGUARD_CLUSTER_DNS_IP. start_dnsmasq() then serves the records on that address; the
machine's own resolver is never touched. dns_available() says whether this process is set up so.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
# tests/integration/python/harness.py, loaded under another name (this module is "harness" too).
_spec = importlib.util.spec_from_file_location(
    "integration_harness", HERE.parent / "integration" / "python" / "harness.py")
base = sys.modules["integration_harness"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(base)

from rs_double import RunningDouble  # noqa: E402

StartError = base.StartError
Proc = base.Proc
free_port = base.free_port
findings = base.findings

ADMIN_USER, ADMIN_PASSWORD = base.AUTH_USER, base.AUTH_PASSWORD
SRV_DOMAIN = "docguard.test"           # SRV name: cluster.docguard.test; members db.docguard.test
SRV_NAME, SRV_TARGET = f"cluster.{SRV_DOMAIN}", f"db.{SRV_DOMAIN}"


def start_ferretdb(workdir: Path, *, auth: bool = False, timeout: float = 30.0) -> Proc:
    """FerretDB v1.24 (SQLite) on a free port, started by the one harness. auth=True: SCRAM on,
    user ADMIN_USER/ADMIN_PASSWORD in admin (both SCRAM-SHA-1 and SCRAM-SHA-256)."""
    return base.start_ferretdb(workdir, timeout, auth=auth)


def dns_ip() -> str | None:
    return os.environ.get("DOCGUARD_CLUSTER_DNS_IP")


def dns_available() -> str:
    """'' when a private DNS can be served here, else why not."""
    ip = dns_ip()
    if not ip:
        return "not inside tests/cluster/run.sh's namespace (DOCGUARD_CLUSTER_DNS_IP unset)"
    try:
        if f"nameserver {ip}" not in Path("/etc/resolv.conf").read_text():
            return f"/etc/resolv.conf does not name {ip} (no private resolv.conf mounted)"
    except OSError as e:
        return f"/etc/resolv.conf: {e}"
    if not shutil.which("dnsmasq"):
        return "dnsmasq not installed (Debian package dnsmasq-base; scripts/install-deps.sh)"
    return ""


def start_dnsmasq(workdir: Path, ports: list[int], *, txt: str = "replicaSet=rs0&authSource=admin",
                  target_ip: str = "127.0.0.1", timeout: float = 10.0) -> Proc:
    """dnsmasq on DOCGUARD_CLUSTER_DNS_IP: SRV _mongodb._tcp.SRV_NAME -> SRV_TARGET:port for each
    port, TXT SRV_NAME -> txt, A SRV_TARGET -> target_ip. Waits until it answers the SRV query."""
    import dns.resolver  # dnspython: a PyMongo dependency

    ip = dns_ip()
    if not ip or not shutil.which("dnsmasq"):
        raise StartError("private DNS unavailable: " + dns_available())
    args = ["dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
            "--no-poll", f"--listen-address={ip}", "--bind-interfaces", "--port=53",
            "--pid-file=", "--user=", "--group=", "--log-facility=-", "--log-queries",
            f"--txt-record={SRV_NAME},{txt}", f"--host-record={SRV_TARGET},{target_ip}"]
    args += [f"--srv-host=_mongodb._tcp.{SRV_NAME},{SRV_TARGET},{p},0,0" for p in ports]
    # --user= --group=: no change of identity, which a user namespace (non-root run.sh) refuses.
    proc = base._spawn("dnsmasq", args, workdir / "dnsmasq.log")
    resolver = dns.resolver.Resolver(configure=False)
    resolver.nameservers, resolver.lifetime = [ip], 1.0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.alive():
        try:
            if len(resolver.resolve(f"_mongodb._tcp.{SRV_NAME}", "SRV")) == len(ports):
                return proc
        except Exception:
            pass
        time.sleep(0.1)
    last = base._tail(proc.log_path)
    proc.stop()
    raise StartError(f"dnsmasq did not answer on {ip} within {timeout}s; log:\n{last}")


# ---------------------------------------------------------------- targets

@dataclass
class Target:
    """What clients connect to: the double itself, or (later) docguard in front of it.

    DOCGUARD_CLUSTER_VIA=docguard starts docguard (DOCGUARD_BIN) with the double's URI as
    --upstream and points clients at docguard; topology-specific checks then look at the double's
    counters instead of the driver's view.
    """
    upstream_uri: str        # the cluster's own URI (the double)
    uri_base: str            # mongodb://host[,host...]/ or mongodb+srv://name/ clients use
    options: dict
    via_docguard: bool = False
    proc: Proc | None = None

    def uri(self, **options) -> str:
        opts = dict(self.options)
        opts.update(options)
        query = "&".join(f"{k}={v}" for k, v in opts.items() if v is not None)
        return self.uri_base + ("?" + query if query else "")

    def client(self, **options):
        """A PyMongo client for uri(); options are MongoClient keyword arguments."""
        import pymongo
        options.setdefault("heartbeatFrequencyMS", 500)
        options.setdefault("serverSelectionTimeoutMS", 10000)
        options.setdefault("connectTimeoutMS", 3000)
        return pymongo.MongoClient(self.uri(), **options)

    def stop(self) -> None:
        if self.proc:
            self.proc.stop()


def via_docguard() -> bool:
    return os.environ.get("DOCGUARD_CLUSTER_VIA", "double") == "docguard"


def make_target(upstream_uri: str, workdir: Path) -> Target:
    """Target for a cluster URI such as mongodb://a,b,c/?replicaSet=rs0 or mongodb+srv://..."""
    base_part, _, query = upstream_uri.partition("?")
    opts = dict(kv.split("=", 1) for kv in query.split("&") if kv)
    if not via_docguard():
        return Target(upstream_uri, base_part, opts)
    # Debug lines: which server each client connection went to, waited for or left, for a
    # failover that goes wrong (the work dir is kept with DOCGUARD_CLUSTER_KEEP=1).
    dg = base.start_docguard(upstream_uri, workdir, extra_args=["--log-level", "debug"])
    # docguard is one server to the client: no replicaSet, and SRV/TLS choices are docguard's.
    return Target(upstream_uri, f"mongodb://127.0.0.1:{dg.ports['listen']}/", {}, True, dg)


def start_double(upstream: Proc, n: int = 3, **kw) -> RunningDouble:
    """The double on a thread of this process (shares the GIL with the test's clients)."""
    return RunningDouble(f"127.0.0.1:{upstream.ports['listen']}", n, **kw)


class DoubleProcess:
    """The double as a child process (rs_double.py CLI), driven over its control port; the same
    methods as RunningDouble. For load tests: the clients' threads do not slow the double down."""

    def __init__(self, upstream: Proc, n: int = 3, set_name: str = "rs0", *, mongos: bool = False,
                 advertise_host: str | None = None, log_path: Path | None = None,
                 timeout: float = 15.0):
        import json
        import select
        import socket
        import subprocess
        import threading

        self._json, self._lock = json, threading.Lock()
        args = [sys.executable, str(HERE / "rs_double.py"), "--upstream",
                f"127.0.0.1:{upstream.ports['listen']}", "--ports", ",".join(["0"] * n),
                "--set-name", set_name] + (["--mongos"] if mongos else []) + (
                    ["--advertise-host", advertise_host] if advertise_host else [])
        self.set_name, self.mongos = set_name, mongos
        err = open(log_path, "ab") if log_path else subprocess.DEVNULL
        self.popen = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=err, preexec_fn=base._pdeathsig, text=True)
        if log_path:
            err.close()
        if not select.select([self.popen.stdout], [], [], timeout)[0]:
            self.close()
            raise StartError(f"rs_double did not start within {timeout}s")
        ready = json.loads(self.popen.stdout.readline() or "{}")
        if ready.get("event") != "ready":
            self.close()
            raise StartError("rs_double failed to start")
        self.addresses = [m["address"] for m in ready["members"]]
        self.control = ready["control"]
        host, port = self.control.rsplit(":", 1)
        self._sock = socket.create_connection((host, int(port)), timeout=timeout)
        self._file = self._sock.makefile("rw")

    def command(self, line: str) -> dict:
        """One control command; its status answer, or RuntimeError with the double's message."""
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()
            answer = self._file.readline().strip()
        if not answer.startswith("ok "):
            raise RuntimeError(f"rs_double {line!r}: {answer or 'no answer'}")
        return self._json.loads(answer[3:])

    def uri(self, **options) -> str:
        opts = {} if self.mongos else {"replicaSet": self.set_name}
        opts.update(options)
        return "mongodb://" + ",".join(self.addresses) + "/?" + "&".join(
            f"{k}={v}" for k, v in opts.items())

    def status(self) -> dict:
        return self.command("status")

    @property
    def primary(self) -> str | None:
        return self.status()["primary"]

    def elect(self, member) -> None:
        self.command(f"elect {member}")

    def step_down(self, to=None) -> None:
        self.command("stepdown" + ("" if to is None else f" {to}"))

    def no_primary(self) -> None:
        self.command("noprimary")

    def delay_hello(self, member, seconds: float) -> None:
        self.command(f"hellodelay {member} {seconds}")

    def kill(self, member) -> None:
        self.command(f"kill {member}")

    def revive(self, member) -> None:
        self.command(f"revive {member}")

    def commands(self, member=None, **match) -> list[dict]:
        # Values travel as words: member and seq are numbers, None is null, the rest strings.
        words = ([] if member is None else [str(member)]) + [
            f"{k}={'null' if v is None else v}" for k, v in match.items()]
        return self.command(" ".join(["commands"] + words))

    def clear_commands(self, member=None) -> None:
        self.command("clearcommands" + ("" if member is None else f" {member}"))

    def set_validator(self, ns: str, validator: dict | None, level: str = "strict",
                      action: str = "error") -> None:
        self.command(f"validator {ns} {self._json.dumps(validator)} {level} {action}")

    def enable_sample(self, on: bool = True) -> None:
        self.command("sample " + ("on" if on else "off"))

    def set_index_stats(self, ns: str, ops: dict | None, member=None) -> None:
        self.command(f"indexstats {ns} {self._json.dumps(ops)}" +
                     ("" if member is None else f" {member}"))

    def close(self) -> None:
        if self.popen.poll() is None:
            try:
                self.command("quit")
                self.popen.wait(10)
            except Exception:
                self.popen.kill()
                self.popen.wait(5)
        for f in ("_file", "_sock"):
            if hasattr(self, f):
                getattr(self, f).close()


def wait_for(predicate, timeout: float, interval: float = 0.02, what: str = "condition"):
    """Poll predicate() until truthy; returns (value, seconds). Raises AssertionError on timeout."""
    start = time.monotonic()
    while True:
        value = predicate()
        if value:
            return value, time.monotonic() - start
        if time.monotonic() - start > timeout:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


# ---------------------------------------------------------------- serve mode (other languages, demo)

def serve(argv: list[str]) -> int:
    """FerretDB + the double (CLI, with its control port) until SIGTERM/SIGINT; KEY=value lines in
    --env-file once both answer: FERRETDB_URI, CLUSTER_URI, CLUSTER_CONTROL (host:port of the line
    protocol), CLUSTER_MEMBERS (comma-separated), CLUSTER_USER/CLUSTER_PASSWORD with --auth."""
    import argparse
    import json
    import signal
    import subprocess

    ap = argparse.ArgumentParser(prog="harness.py serve")
    ap.add_argument("--workdir", required=True, type=Path)
    ap.add_argument("--env-file", required=True, type=Path)
    ap.add_argument("--members", type=int, default=3)
    ap.add_argument("--set-name", default="rs0")
    ap.add_argument("--mongos", action="store_true")
    ap.add_argument("--auth", action="store_true", help="FerretDB with SCRAM users")
    a = ap.parse_args(argv)
    stopping = False

    def on_signal(_signum, _frame):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    procs: list[Proc] = []
    try:
        fdb = start_ferretdb(a.workdir, auth=a.auth)
        procs.append(fdb)
        args = [sys.executable, str(HERE / "rs_double.py"), "--upstream",
                f"127.0.0.1:{fdb.ports['listen']}", "--ports", ",".join(["0"] * a.members),
                "--set-name", a.set_name] + (["--mongos"] if a.mongos else [])
        log = open(a.workdir / "rs_double.log", "ab")
        dbl = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log,
                               preexec_fn=base._pdeathsig, text=True)
        log.close()
        procs.append(Proc("rs_double", dbl, a.workdir / "rs_double.log"))
        import select
        if not select.select([dbl.stdout], [], [], 15)[0]:
            raise StartError("rs_double did not report ready within 15s")
        ready = json.loads(dbl.stdout.readline() or "{}")
        if ready.get("event") != "ready":
            raise StartError(f"rs_double failed: {base._tail(a.workdir / 'rs_double.log')}")
        members = [m["address"] for m in ready["members"]]
        query = "" if a.mongos else f"?replicaSet={a.set_name}"
        env = {"FERRETDB_URI": f"mongodb://127.0.0.1:{fdb.ports['listen']}",
               "CLUSTER_URI": "mongodb://" + ",".join(members) + "/" + query,
               "CLUSTER_CONTROL": ready["control"], "CLUSTER_MEMBERS": ",".join(members)}
        if a.auth:
            env.update(CLUSTER_USER=ADMIN_USER, CLUSTER_PASSWORD=ADMIN_PASSWORD)
        tmp = a.env_file.with_suffix(".tmp")
        tmp.write_text("".join(f"{k}={v}\n" for k, v in env.items()))
        tmp.rename(a.env_file)
        while not stopping:
            for p in procs:
                if not p.alive():
                    print(f"harness: {p.name} exited with {p.popen.returncode}:\n"
                          f"{base._tail(p.log_path)}", file=sys.stderr)
                    return 1
            time.sleep(0.3)
        return 0
    except StartError as e:
        print(f"harness: {e}", file=sys.stderr)
        return 1
    finally:
        for p in reversed(procs):
            p.stop()


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "serve":
        sys.exit(serve(sys.argv[2:]))
    print("usage: harness.py serve --workdir DIR --env-file FILE [--members N] [--set-name rs0] "
          "[--mongos] [--auth]", file=sys.stderr)
    sys.exit(2)
