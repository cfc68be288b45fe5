"""Start FerretDB and docguard on free 127.0.0.1 ports, wait for them, stop them.

Used three ways:
  * imported by conftest.py (pytest session fixtures);
  * `python harness.py serve --workdir DIR --env-file FILE` by tests/integration/run.sh and
    scripts/demo.sh: starts FerretDB + docguard, writes shell `KEY=value` lines to FILE once both
    answer, then runs until SIGTERM/SIGINT and stops what it started;
  * helpers (metrics parsing, log reading) shared by the tests.

Every wait is bounded. Child processes get PR_SET_PDEATHSIG so they die with this process even if it
is killed with SIGKILL.
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import json
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import time
import uuid
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
TOOLS = Path(os.environ.get("DOCGUARD_TOOLS", REPO / ".tools"))
FERRETDB_BIN = Path(os.environ.get("FERRETDB_BIN", TOOLS / "bin" / "ferretdb"))
DEFAULT_DOCGUARD_BIN = REPO / "build" / "bin" / "docguard"


class StartError(RuntimeError):
    pass


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


_handed_out: set[int] = set()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago.

    Picked below the kernel's ephemeral range: a port the kernel chose for us (bind to 0) is one
    it may also give the next outgoing connection, and under load a driver's own socket then
    takes the port before the server we start can listen on it. Ports outside that range are
    only ever taken by an explicit bind.
    """
    low, _ = _ephemeral_range()
    floor = 10000 if low > 12000 else 1024
    # Suites run side by side (scripts/test.sh's lanes) take disjoint slices of that range
    # (DOCGUARD_PORT_SLICE=i/n), so that two of them never pick the same port between one's
    # check and its server's bind.
    slice_index, slices = (int(x) for x in os.environ.get("DOCGUARD_PORT_SLICE", "0/1").split("/"))
    width = (low - floor) // slices
    floor, low = floor + slice_index * width, floor + (slice_index + 1) * width
    rng = random.SystemRandom()
    for _ in range(200):
        port = rng.randrange(floor, low)
        if port in _handed_out:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:  # a crowded machine: fall back
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _pdeathsig() -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def _tail(path: Path, n: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen
    log_path: Path
    ports: dict = field(default_factory=dict)

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, timeout: float = 10.0) -> int | None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout=5)
        return self.popen.returncode


def _spawn(name: str, args: list[str], log_path: Path) -> Proc:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = open(log_path, "ab")
    try:
        p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                             preexec_fn=_pdeathsig, close_fds=True)
    finally:
        log.close()
    return Proc(name, p, log_path)


def _mongo_ping(port: int, timeout: float) -> bool:
    """True when a MongoDB server (or docguard with a reachable upstream) answers ping."""
    import pymongo  # imported lazily: the `serve` mode needs it too, but keep import cheap

    try:
        c = pymongo.MongoClient("127.0.0.1", port, directConnection=True,
                                serverSelectionTimeoutMS=int(timeout * 1000),
                                connectTimeoutMS=int(timeout * 1000))
        try:
            c.admin.command("ping")
            return True
        finally:
            c.close()
    except Exception:
        return False


def findings(report: dict, **match: str) -> list[dict]:
    """The findings of a /report or `docguard scan --format json` whose members equal `match`
    (e.g. collection="orders", kind="approaching_limit")."""
    return [f for f in report["findings"] if all(f.get(k) == v for k, v in match.items())]


# The SCRAM user of an auth FerretDB (start_ferretdb(auth=True)): FerretDB gives it both
# SCRAM-SHA-1 and SCRAM-SHA-256 credentials.
AUTH_USER, AUTH_PASSWORD = "admin", "docguard-test-secret"


def start_ferretdb(workdir: Path, timeout: float = 30.0, port: int | None = None, *,
                   auth: bool = False) -> Proc:
    """FerretDB v1.24 with the SQLite backend in workdir, on a free port; waits until it answers.
    auth=True: SCRAM on (--test-enable-new-auth), user AUTH_USER/AUTH_PASSWORD in admin."""
    if not os.access(FERRETDB_BIN, os.X_OK):
        raise StartError(f"FerretDB binary not found at {FERRETDB_BIN}: run scripts/install-deps.sh")
    last = ""
    for _attempt in range(3):
        p_port = port or free_port()
        data = workdir / f"ferretdb-{p_port}"
        data.mkdir(parents=True, exist_ok=True)
        args = [str(FERRETDB_BIN), "--handler=sqlite", f"--sqlite-url=file:{data}/",
                f"--listen-addr=127.0.0.1:{p_port}", f"--state-dir={data}",
                "--telemetry=disable", "--debug-addr=-", "--log-level=warn", "--log-format=text"]
        if auth:
            args += ["--test-enable-new-auth", f"--setup-username={AUTH_USER}",
                     f"--setup-password={AUTH_PASSWORD}", "--setup-database=admin"]
        proc = _spawn("ferretdb", args, workdir / f"ferretdb-{p_port}.log")
        proc.ports["listen"] = p_port
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not proc.alive():
                break
            if port_open(p_port) and _mongo_ping(p_port, 2.0):  # ping needs no auth
                return proc
            time.sleep(0.2)
        last = _tail(proc.log_path)
        proc.stop()
        if port is not None:
            break
    raise StartError(f"FerretDB did not start within {timeout}s; log:\n{last}")


def docguard_bin() -> Path:
    return Path(os.environ.get("DOCGUARD_BIN") or DEFAULT_DOCGUARD_BIN)


def rss_mib(pid: int) -> float:
    """A process's resident memory (VmRSS) in MiB."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def sanitizer_quarantine_mib() -> int:
    """Memory an AddressSanitizer build of docguard keeps after it is freed (its quarantine, which
    catches use-after-free by not reusing freed blocks at once): 0 for a plain build. A test that
    bounds docguard's memory adds it, so the bound holds the same claim under the sanitizer."""
    with open(docguard_bin(), "rb") as binary:
        if b"__asan_init" not in binary.read():
            return 0
    for option in os.environ.get("ASAN_OPTIONS", "").split(":"):
        if option.startswith("quarantine_size_mb="):
            return int(option.split("=", 1)[1])
    return 256  # AddressSanitizer's default on 64-bit Linux


def thread_sanitized() -> bool:
    """Whether docguard is a ThreadSanitizer build: its shadow memory grows with all the memory
    docguard touches (several times over), so a bound on docguard's own memory cannot be read from
    its resident size there."""
    with open(docguard_bin(), "rb") as binary:
        return b"__tsan_init" in binary.read()


def write_config(path: Path, listen: str, upstream: str, admin: str, log_format: str,
                 threads: int | None) -> Path:
    """A docguard YAML config holding the same settings the flags give (flags override it)."""
    lines = [
        "# written by tests/integration/python/harness.py",
        f'listen: "{listen}"',
        f'upstream: "{upstream}"',
        f'admin: "{admin}"',
        f"log_format: {log_format}",
    ]
    if threads:
        lines.append(f"threads: {threads}")
    path.write_text("\n".join(lines) + "\n")
    return path


def http_get(url: str, timeout: float = 3.0) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def admin_json(proc: "Proc", path: str, timeout: float = 10.0) -> dict:
    """GET a JSON endpoint of docguard's admin listener (/status, /report.json)."""
    code, body = http_get(f"http://127.0.0.1:{proc.ports['admin']}{path}", timeout=timeout)
    assert code == 200, body
    return json.loads(body)


def wait_for_introspection_pass(proc: "Proc", after: int = 0, timeout: float = 60) -> None:
    """Waits until docguard has finished more than `after` introspection passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if admin_json(proc, "/status")["introspection"].get("passes", 0) > after:
            return
        time.sleep(0.1)
    raise AssertionError(f"no introspection pass within {timeout} s: {admin_json(proc, '/status')}")


def start_docguard(upstream_uri: str, workdir: Path, *, bin_path: Path | None = None,
                   config: Path | str | None = "auto", threads: int | None = 2,
                   log_format: str = "json", extra_args: list[str] | None = None,
                   wait_upstream: bool = True, timeout: float = 20.0) -> Proc:
    """docguard in front of upstream_uri on free listen/admin ports, stderr captured to a file.

    config="auto" writes a config file with the same settings as the flags (set
    DOCGUARD_TEST_NO_CONFIG=1 to pass none); a path uses that file; None passes no --config.
    Waits until the listen port accepts, /healthz answers 200 and (if wait_upstream) a ping through
    docguard succeeds.
    """
    bin_path = Path(bin_path or docguard_bin())
    if not os.access(bin_path, os.X_OK):
        raise StartError(f"docguard binary not found at {bin_path} (build it, or set DOCGUARD_BIN; "
                         "DOCGUARD_DIRECT=1 tests FerretDB directly)")
    workdir.mkdir(parents=True, exist_ok=True)
    last = ""
    for _attempt in range(3):
        lport, aport = free_port(), free_port()
        while aport == lport:
            aport = free_port()
        listen, admin = f"127.0.0.1:{lport}", f"127.0.0.1:{aport}"
        args = [str(bin_path), "--listen", listen, "--upstream", upstream_uri, "--admin", admin,
                "--log-format", log_format]
        if threads:
            args += ["--threads", str(threads)]
        if config == "auto" and os.environ.get("DOCGUARD_TEST_NO_CONFIG") != "1":
            cfg = write_config(workdir / f"docguard-{lport}.yaml", listen, upstream_uri, admin,
                               log_format, threads)
            args += ["--config", str(cfg)]
        elif config not in (None, "auto"):
            args += ["--config", str(config)]
        args += list(extra_args or [])
        proc = _spawn("docguard", args, workdir / f"docguard-{lport}.log")
        proc.ports.update(listen=lport, admin=aport)
        deadline = time.monotonic() + timeout
        ok = False
        while time.monotonic() < deadline:
            if not proc.alive():
                break
            if port_open(lport) and port_open(aport):
                try:
                    status, _ = http_get(f"http://{admin}/healthz", timeout=1.0)
                except OSError:
                    status = 0
                if status == 200 and (not wait_upstream or _mongo_ping(lport, 2.0)):
                    ok = True
                    break
            time.sleep(0.2)
        if ok:
            return proc
        last = f"exit code {proc.popen.poll()}; args: {' '.join(args)}\n" + _tail(proc.log_path)
        proc.stop()
    raise StartError(f"docguard did not become ready within {timeout}s; {last}")


# ---------------------------------------------------------------- metrics and logs

def parse_prometheus(text: str) -> dict[tuple[str, frozenset], float]:
    """Prometheus text exposition -> {(name, frozenset(label items)): value}."""
    out: dict[tuple[str, frozenset], float] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        labels: dict[str, str] = {}
        if "{" in line:
            name, rest = line.split("{", 1)
            body, rest = rest.rsplit("}", 1)
            i = 0
            while i < len(body):
                eq = body.index("=", i)
                key = body[i:eq].strip().lstrip(",").strip()
                j = eq + 2  # skip ="
                val = []
                while body[j] != '"':
                    if body[j] == "\\":
                        j += 1
                        val.append({"n": "\n"}.get(body[j], body[j]))
                    else:
                        val.append(body[j])
                    j += 1
                labels[key] = "".join(val)
                i = j + 1
                while i < len(body) and body[i] in ", ":
                    i += 1
            value = rest.split()[0]
        else:
            parts = line.split()
            name, value = parts[0], parts[1]
        try:
            out[(name.strip(), frozenset(labels.items()))] = float(value)
        except ValueError:
            continue
    return out


def metric_sum(samples: dict, name: str, **labels: str) -> float:
    """Sum of every series of `name` whose labels include `labels` (0 if none)."""
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= set(ls))


def fetch_metrics(admin: str) -> dict:
    status, body = http_get(f"http://{admin}/metrics")
    if status != 200:
        raise AssertionError(f"/metrics answered {status}: {body[:200]}")
    return parse_prometheus(body)


def read_log_lines(path: Path | str, start: int = 0) -> list[str]:
    """Lines of a docguard log file, from line index `start`."""
    try:
        return Path(path).read_text(errors="replace").splitlines()[start:]
    except OSError:
        return []


def parse_json_lines(lines: list[str]) -> list[dict]:
    out = []
    for ln in lines:
        ln = ln.strip()
        if ln.startswith("{"):
            try:
                out.append(json.loads(ln))
            except ValueError:
                pass
    return out


# ---------------------------------------------------------------- recordings (docs/recording.md)
# An independent reader of the recording layout (from the documented layout alone), and docguard
# with recording on: shared by test_recording.py, test_replay.py and test_recording_drivers.py.

TOKEN = "rec-" + uuid.uuid4().hex  # the admin token of start_proxy's docguard

@dataclass
class Packet:
    event: int  # 0 request, 1 response, 2 session start, 3 session end
    connection: int
    session: str
    offset: int
    order: int
    message: bytes
    length: int = 0
    request_id: int = 0
    response_to: int = 0
    opcode: int = 0


def read_packets(directory: Path) -> list[Packet]:
    """Every packet of every .bin file, files in name order: u32 size, u8 event, u64 id, the
    session text and a NUL, u64 offset, u64 order, then the wire message and its header."""
    packets = []
    for path in sorted(directory.glob("*.bin")):
        data = path.read_bytes()
        at = 0
        while at < len(data):
            size, event, connection = struct.unpack_from("<IBQ", data, at)
            end = data.index(b"\0", at + 13)
            offset, order = struct.unpack_from("<QQ", data, end + 1)
            p = Packet(event, connection, data[at + 13:end].decode(), offset, order,
                       data[end + 17:at + size])
            if p.message:
                p.length, p.request_id, p.response_to, p.opcode = struct.unpack_from(
                    "<iiii", p.message)
                assert p.length == len(p.message), (path, order)
            packets.append(p)
            at += size
        assert at == len(data), path
    return packets


def body_of(p: Packet) -> dict:
    """The command document of an OP_MSG (kind-0 section) or OP_QUERY / OP_REPLY."""
    import bson  # PyMongo's; imported here so that `harness.py serve` needs no driver

    m = p.message
    if p.opcode == 2013:
        at = 20
        while at < len(m):
            kind = m[at]
            if kind == 0:
                size = struct.unpack_from("<i", m, at + 1)[0]
                return bson.decode(m[at + 1:at + 1 + size])
            at += 1 + struct.unpack_from("<i", m, at + 1)[0]
        raise AssertionError("no body")
    if p.opcode == 2004:
        at = m.index(b"\0", 20) + 9
    else:
        at = 36
    size = struct.unpack_from("<i", m, at)[0]
    return bson.decode(m[at:at + size])


def sequences_of(p: Packet) -> dict[str, int]:
    """Kind-1 sections of an OP_MSG: identifier -> number of documents."""
    m, out, at = p.message, {}, 20
    while at < len(m) and p.opcode == 2013:
        size = struct.unpack_from("<i", m, at + 1)[0]
        if m[at] == 1:
            ident_end = m.index(b"\0", at + 5)
            docs, pos = 0, ident_end + 1
            while pos < at + 1 + size:
                pos += struct.unpack_from("<i", m, pos)[0]
                docs += 1
            out[m[at + 5:ident_end].decode()] = docs
        at += 1 + size
    return out


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


# ------------------------------------------------------------ docguard with recording

def admin_call(proc, method: str, path: str, body: dict | None = None, token: str | None = TOKEN,
               headers: dict[str, str] | None = None, raw_body: bytes | None = None):
    """One admin request as curl would send it: a JSON body with its Content-Type. `headers`
    adds or replaces headers (Origin, Host, Content-Type); `raw_body` is sent as it is."""
    # No body: no data at all, or urllib would add a form's Content-Type the admin API refuses.
    data = raw_body if raw_body is not None else (
        json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(f"http://127.0.0.1:{proc.ports['admin']}{path}", method=method,
                                 data=data)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        req.add_header(name, value)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            text = r.read().decode() or "{}"
            return r.status, (json.loads(text) if text.startswith("{") else {"text": text})
    except urllib.error.HTTPError as e:
        text = e.read().decode()
        return e.code, (json.loads(text) if text.startswith("{") else {"text": text})


def metrics(proc) -> dict:
    req = urllib.request.Request(f"http://127.0.0.1:{proc.ports['admin']}/metrics",
                                 headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return parse_prometheus(r.read().decode())


def start_proxy(workdir: Path, upstream: str, recording: str = "", token: str | None = TOKEN
                ) -> Proc:
    workdir.mkdir(parents=True, exist_ok=True)
    cfg = workdir / "docguard.yaml"
    admin = f"{{listen: '127.0.0.1:9216', token: {token}}}" if token else "'127.0.0.1:9216'"
    cfg.write_text(f"admin: {admin}\n{recording}")
    return start_docguard(upstream, workdir, config=cfg, wait_upstream=False)



# What `docguard replay` does not send again: libmongoc makes its own handshake and sessions (and a
# ping on each connection before the clock starts).
NOT_REPLAYED = {"hello", "isMaster", "ismaster", "saslStart", "saslContinue", "authenticate",
                "getnonce", "endSessions", "$docguardUnrecorded", "ping"}


# What `docguard replay` may send at all (its allow-list): the rest is skipped and counted.
REPLAYED = {"find", "count", "distinct", "aggregate", "getMore", "killCursors", "listCollections",
            "listIndexes", "dbStats", "collStats", "explain", "listDatabases", "insert", "update",
            "delete", "findAndModify", "findandmodify", "create", "createIndexes", "drop",
            "dropIndexes", "bulkWrite", "commitTransaction", "abortTransaction"}


def commands_per_connection(rec: Path) -> "collections.Counter":
    """Each connection's replayable commands in its order; connections without any left out."""
    by_conn: dict[int, list[str]] = {}
    for p in read_packets(rec):
        if p.event == 0:
            name = next(iter(body_of(p)))
            if name not in NOT_REPLAYED and name in REPLAYED:
                by_conn.setdefault(p.connection, []).append(name)
    return collections.Counter(tuple(names) for names in by_conn.values())


# ---------------------------------------------------------------- serve mode (run.sh, demo.sh)

def serve(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="harness.py serve")
    ap.add_argument("--workdir", required=True, type=Path)
    ap.add_argument("--env-file", required=True, type=Path)
    ap.add_argument("--config", default="auto",
                    help="'auto' (generated), 'none', or a docguard YAML config path")
    ap.add_argument("--direct", action="store_true", help="FerretDB only, no docguard")
    ap.add_argument("--log-format", default="json")
    a = ap.parse_args(argv)

    procs: list[Proc] = []
    stopping = False

    def on_signal(signum, _frame):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        fdb = start_ferretdb(a.workdir)
        procs.append(fdb)
        fport = fdb.ports["listen"]
        env = {"FERRETDB_URI": f"mongodb://127.0.0.1:{fport}", "FERRETDB_PORT": str(fport),
               "FERRETDB_LOG": str(fdb.log_path)}
        # A second FerretDB with SCRAM users, and docguard in front of it: the auth suites
        # (test_scram.py, scram.test.mjs) connect to DOCGUARD_AUTH_URI with credentials.
        afdb = start_ferretdb(a.workdir / "auth", auth=True)
        procs.append(afdb)
        env.update(FERRETDB_AUTH_URI=f"mongodb://127.0.0.1:{afdb.ports['listen']}",
                   DOCGUARD_AUTH_USER=AUTH_USER, DOCGUARD_AUTH_PASSWORD=AUTH_PASSWORD)
        if a.direct:
            env.update(DOCGUARD_URI=env["FERRETDB_URI"], DOCGUARD_PORT=str(fport),
                       DOCGUARD_DIRECT="1", DOCGUARD_AUTH_URI=env["FERRETDB_AUTH_URI"])
        else:
            adg = start_docguard(env["FERRETDB_AUTH_URI"], a.workdir / "auth", config=None,
                                 log_format=a.log_format)
            procs.append(adg)
            env.update(DOCGUARD_AUTH_URI=f"mongodb://127.0.0.1:{adg.ports['listen']}",
                       DOCGUARD_AUTH_LOG=str(adg.log_path))
            cfg: Path | str | None = {"auto": "auto", "none": None}.get(a.config, a.config)
            dg = start_docguard(env["FERRETDB_URI"], a.workdir, config=cfg,
                                log_format=a.log_format)
            procs.append(dg)
            env.update(DOCGUARD_URI=f"mongodb://127.0.0.1:{dg.ports['listen']}",
                       DOCGUARD_PORT=str(dg.ports["listen"]),
                       DOCGUARD_ADMIN=f"127.0.0.1:{dg.ports['admin']}",
                       DOCGUARD_LOG=str(dg.log_path), DOCGUARD_PID=str(dg.popen.pid))
        tmp = a.env_file.with_suffix(".tmp")
        tmp.write_text("".join(f"{k}={v}\n" for k, v in env.items()))
        tmp.rename(a.env_file)
        while not stopping:
            for p in procs:
                if not p.alive():
                    print(f"harness: {p.name} exited with {p.popen.returncode}; log "
                          f"{p.log_path}:\n{_tail(p.log_path)}", file=sys.stderr)
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
    print("usage: harness.py serve --workdir DIR --env-file FILE [--direct] [--config auto|none|PATH]",
          file=sys.stderr)
    sys.exit(2)


class CommandsStarted:
    """A PyMongo command listener (register it with event_listeners=[...]): what the driver
    sent, as (request id, command name), in order."""

    def __init__(self):
        self.events = []

    def started(self, event):
        self.events.append((event.request_id, event.command_name))

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass


def getmore_replies(recording) -> list[dict]:
    """The replies a recording holds to its getMore requests, matched per connection."""
    packets = read_packets(recording)
    getmores = {(p.connection, p.request_id) for p in packets if p.event == 0
                and next(iter(body_of(p))) == "getMore"}
    return [body_of(p) for p in packets
            if p.event == 1 and (p.connection, p.response_to) in getmores]


class WireConnection:
    """One connection speaking OP_MSG by hand, without authentication: every command goes out
    exactly as written. A driver puts its own session (lsid) on each command, so a session shared
    between two connections, as a transaction or a cursor continued elsewhere may be, is written
    this way. The handshake names `app`."""

    def __init__(self, port: int, app: str | None = None, timeout: float = 10.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.request_id = 0
        hello: dict = {"hello": 1, "$db": "admin"}
        if app:
            hello["client"] = {"application": {"name": app},
                               "driver": {"name": "docguard-tests", "version": "1"},
                               "os": {"type": "Linux"}}
        self.command(hello)

    def command(self, doc: dict) -> dict:
        import bson

        self.request_id += 1
        payload = b"\0\0\0\0\0" + bson.encode(doc)
        self.sock.sendall(struct.pack("<iiii", 16 + len(payload), self.request_id, 0, 2013) +
                          payload)
        head = self._read(16)
        size, _, response_to, opcode = struct.unpack("<iiii", head)
        rest = self._read(size - 16)
        assert response_to == self.request_id and opcode == 2013 and rest[4] == 0, (opcode, rest)
        return bson.decode(rest[5:5 + struct.unpack_from("<i", rest, 5)[0]])

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed before a whole reply")
            data += chunk
        return data

    def close(self) -> None:
        self.sock.close()
