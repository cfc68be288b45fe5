"""docguard on a Unix domain socket next to its TCP listener (the sidecar layout).

* real drivers through the socket (URI mongodb://%2Ftmp%2F...%2Fdocguard.sock): PyMongo insert,
  find and a code-121 block from a rule, mongosh --eval insert + find; the hello persona names
  the socket, and log lines name the peer unix:PATH(pid=…,uid=…);
* the socket file: created with the configured mode, not taken over while another docguard
  listens on it, replaced when stale (its process was killed), removed on SIGTERM;
* limits.max_connections counts the connections of both listeners together.

Each test starts docguard instances of its own in front of the suite's FerretDB.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import struct
import subprocess
import tempfile
import time
import urllib.parse
from pathlib import Path

import bson
import pymongo
import pytest
from pymongo.errors import WriteError

import harness

pytestmark = pytest.mark.proxy

MONGOSH = harness.REPO / "tests" / "integration" / "node" / "node_modules" / ".bin" / "mongosh"

RULES = """\
mode: block
tracking:
  read_sample_rate: 0
rules:
  - match: "*.arr"
    max_array_length: 3
"""


def socket_uri(path: Path, db: str = "") -> str:
    return f"mongodb://{urllib.parse.quote(str(path), safe='')}/{db}"


class Sidecar:
    """A docguard started from a config file; `listen` is the YAML of its `listen:` key."""

    def __init__(self, workdir: Path, upstream: str, listen: str, extra: str = ""):
        self.admin = f"127.0.0.1:{harness.free_port()}"
        self.config = workdir / f"docguard-{self.admin.rsplit(':', 1)[1]}.yaml"
        self.config.write_text(f'upstream: "{upstream}"\nadmin: "{self.admin}"\n'
                               f"log_format: json\nthreads: 2\nlisten:\n{listen}\n{extra}{RULES}")
        self.proc = harness._spawn("docguard", [str(harness.docguard_bin()), "--config",
                                                str(self.config)],
                                   workdir / f"{self.config.stem}.log")

    def wait_ready(self, sock: Path, timeout: float = 20.0) -> "Sidecar":
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.alive():
            try:
                status, _ = harness.http_get(f"http://{self.admin}/healthz", timeout=1.0)
            except OSError:
                status = 0
            if status == 200 and sock.exists():
                return self
            time.sleep(0.1)
        raise AssertionError(f"docguard did not start:\n{harness._tail(self.proc.log_path)}")

    def wait_exit(self, timeout: float = 15.0) -> int:
        return self.proc.popen.wait(timeout=timeout)

    def log(self) -> str:
        return self.proc.log_path.read_text(errors="replace")

    def metric(self, name: str) -> float:
        return harness.metric_sum(harness.fetch_metrics(self.admin), name)


@pytest.fixture
def sockdir():
    # Short: a socket path has at most 107 bytes, and pytest's tmp_path can be long.
    d = Path(tempfile.mkdtemp(prefix="dg-unix-", dir="/tmp"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def started(env, sockdir):
    procs: list[Sidecar] = []

    def start(listen: str, sock: Path, extra: str = "", ready: bool = True) -> Sidecar:
        s = Sidecar(env.workdir, env.ferret_uri, listen, extra)
        procs.append(s)
        return s.wait_ready(sock) if ready else s

    yield start
    for s in procs:
        s.proc.stop()


@pytest.fixture
def sidecar(started, sockdir):
    sock = sockdir / "docguard.sock"
    tcp = harness.free_port()
    s = started(f'  - "127.0.0.1:{tcp}"\n  - unix: "{sock}"\n    mode: "0660"\n', sock)
    s.sock, s.tcp = sock, tcp
    return s


def test_pymongo_insert_find_and_block_through_the_socket(sidecar):
    st = os.lstat(sidecar.sock)
    assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o660
    with pymongo.MongoClient(socket_uri(sidecar.sock), serverSelectionTimeoutMS=10000) as c:
        hello = c.admin.command("hello")
        # The member's address is the socket: a driver following the set stays on it.
        assert hello["me"] == str(sidecar.sock) and hello["hosts"] == [str(sidecar.sock)]
        coll = c["it_unix"]["arr"]
        coll.drop()
        coll.insert_one({"_id": 1, "a": [1, 2]})
        assert coll.find_one({"_id": 1}) == {"_id": 1, "a": [1, 2]}
        with pytest.raises(WriteError) as blocked:
            coll.insert_one({"_id": 2, "a": [1, 2, 3, 4]})
        assert blocked.value.code == 121
        assert blocked.value.details["errInfo"]["rule"] == "max_array_length"
        assert [d["_id"] for d in coll.find({})] == [1]
        c.drop_database("it_unix")
    # The violation's log line names the peer by socket and credentials.
    violations = [o for o in harness.parse_json_lines(sidecar.log().splitlines())
                  if o.get("msg") == "docguard design rule violated"]
    assert violations, sidecar.log()
    assert violations[-1]["peer"].startswith(f"unix:{sidecar.sock}(")
    assert f"uid={os.getuid()})" in violations[-1]["peer"]
    # The TCP listener of the same docguard serves too, with the TCP address as the member.
    with pymongo.MongoClient("127.0.0.1", sidecar.tcp, serverSelectionTimeoutMS=10000) as c:
        assert c.admin.command("hello")["me"] == f"127.0.0.1:{sidecar.tcp}"
        assert c["it_unix"]["arr"].count_documents({}) == 0


@pytest.mark.skipif(not MONGOSH.exists(), reason="no mongosh (scripts/install-deps.sh)")
def test_mongosh_insert_and_find_through_the_socket(sidecar):
    script = """
      db.items.insertOne({ name: "from-mongosh", n: 1 });
      const d = db.items.findOne({ name: "from-mongosh" }, { _id: 0 });
      print("RESULT " + JSON.stringify(d));
      db.dropDatabase();
    """
    r = subprocess.run([str(MONGOSH), "--quiet", "--norc", socket_uri(sidecar.sock, "it_unix_sh"),
                        "--eval", script], capture_output=True, text=True, timeout=90,
                       env={**os.environ, "MONGOSH_NO_UPDATE_CHECK": "1", "DO_NOT_TRACK": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    results = [ln[7:] for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    assert results == ['{"name":"from-mongosh","n":1}'], r.stdout + r.stderr


def test_socket_file_lifecycle(started, sockdir):
    sock = sockdir / "docguard.sock"
    listen = f'  - unix: "{sock}"\n    mode: "0600"\n'
    first = started(listen, sock)
    assert stat.S_IMODE(os.lstat(sock).st_mode) == 0o600

    # A second docguard does not take the socket over while the first one listens on it.
    second = started(listen, sock, ready=False)
    assert second.wait_exit() == 2
    assert "another process listens on this socket" in second.log()
    assert sock.exists()
    with pymongo.MongoClient(socket_uri(sock), serverSelectionTimeoutMS=10000) as c:
        c.admin.command("ping")

    # Killed, it leaves the file behind: the next start replaces the stale socket.
    first.proc.popen.kill()
    first.proc.popen.wait(timeout=10)
    assert stat.S_ISSOCK(os.lstat(sock).st_mode)
    third = started(listen, sock)
    assert "removed the stale socket" in third.log()
    with pymongo.MongoClient(socket_uri(sock), serverSelectionTimeoutMS=10000) as c:
        c.admin.command("ping")

    # A clean shutdown removes it.
    third.proc.popen.send_signal(signal.SIGTERM)
    assert third.wait_exit() == 0
    assert not sock.exists()


def test_max_connections_counts_both_listeners(started, sockdir):
    sock = sockdir / "docguard.sock"
    tcp = harness.free_port()
    s = started(f'  - "127.0.0.1:{tcp}"\n  - unix: "{sock}"\n', sock,
                extra="limits:\n  max_connections: 2\n")
    held = [socket.create_connection(("127.0.0.1", tcp), timeout=5),
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)]
    try:
        held[1].settimeout(5)
        held[1].connect(str(sock))
        # Each has spoken: a connection that has not may be closed to admit another.
        for h in held:
            _ping(h)
        deadline = time.monotonic() + 10
        while s.metric("docguard_connections_active") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert s.metric("docguard_connections_active") == 2
        for connect in (lambda: socket.create_connection(("127.0.0.1", tcp), timeout=5),
                        lambda: _unix_connect(sock)):
            extra = connect()
            extra.settimeout(5)
            assert extra.recv(1) == b"", "a connection past max_connections was served"
            extra.close()
        assert s.metric("docguard_connections_rejected_total") == 2
    finally:
        for h in held:
            h.close()


def _ping(sock: socket.socket) -> None:
    payload = b"\0\0\0\0\0" + bson.encode({"ping": 1, "$db": "admin"})
    sock.sendall(struct.pack("<iiii", 16 + len(payload), 1, 0, 2013) + payload)
    head = sock.recv(16)
    left = struct.unpack_from("<i", head)[0] - len(head)
    while left > 0:
        left -= len(sock.recv(left))


def _unix_connect(path: Path) -> socket.socket:
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.settimeout(5)
    c.connect(str(path))
    return c
