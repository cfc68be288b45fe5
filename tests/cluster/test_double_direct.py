"""Real drivers accept and follow the replica-set double.

With DOCGUARD_CLUSTER_VIA unset every test talks to the double DIRECTLY (no proxy): this proves the
double is a faithful cluster. With DOCGUARD_CLUSTER_VIA=docguard the same tests run through
docguard; checks of the driver's own topology view are then skipped, while the double's counters
(what reached which member) still say where the traffic went.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
import uuid

import bson
import pymongo
import pytest
from pymongo.errors import OperationFailure
from pymongo.read_preferences import Secondary, SecondaryPreferred

import harness
import rs_double

# "Followed within a few seconds"; raise it on a machine too loaded for that to mean anything.
RECOVER_S = float(os.environ.get("DOCGUARD_CLUSTER_RECOVER_S", "5"))


def _db(client):
    return client["cl_" + uuid.uuid4().hex[:10]]


def _addr(hostport: str) -> tuple[str, int]:
    h, p = hostport.rsplit(":", 1)
    return h, int(p)


def _inserts(double, member: int) -> int:
    return double.status()["members"][member]["forwarded"].get("insert", 0)


class Writer(threading.Thread):
    """Sequential retryable inserts {_id: n} until stopped; records what was acknowledged."""

    def __init__(self, coll):
        super().__init__(daemon=True)
        self.coll, self.stop_flag = coll, threading.Event()
        self.acked: list[int] = []
        self.ack_times: list[float] = []
        self.errors: list[str] = []

    def run(self):
        n = 0
        while not self.stop_flag.is_set():
            try:
                # A DuplicateKeyError here would be a retry applied twice: an error too.
                self.coll.insert_one({"_id": n})
            except pymongo.errors.PyMongoError as e:
                self.errors.append(f"{n}: {type(e).__name__}: {e}")
                n += 1
                continue
            self.acked.append(n)
            self.ack_times.append(time.monotonic())
            n += 1

    def wait_acks(self, count: int, timeout: float) -> float:
        start = len(self.acked)
        _, secs = harness.wait_for(lambda: len(self.acked) >= start + count or self.errors,
                                   timeout, what=f"{count} more acknowledged writes")
        return secs

    def finish(self):
        self.stop_flag.set()
        self.join(15)
        assert not self.is_alive(), "writer thread hung"

    def max_gap_after(self, t0: float) -> float:
        times = [t0] + [t for t in self.ack_times if t >= t0]
        return max((b - a for a, b in zip(times, times[1:])), default=0.0)

    def check_nothing_lost(self):
        assert not self.errors, f"clients saw errors: {self.errors[:5]}"
        ids = [d["_id"] for d in self.coll.find({}, {"_id": 1})]
        assert len(ids) == len(set(ids)), "a document is present twice"
        missing = set(self.acked) - set(ids)
        assert not missing, f"acknowledged writes missing: {sorted(missing)[:10]}"


def test_discovers_set_and_writes_go_to_primary(double, rs):
    c = rs.client()
    try:
        db = _db(c)
        db.c.insert_many([{"i": i} for i in range(5)])
        for i in range(10):
            db.c.insert_one({"j": i})
        if not rs.via_docguard:
            assert c.topology_description.topology_type_name == "ReplicaSetWithPrimary"
            assert c.primary == _addr(double.addresses[0])
            assert c.secondaries == {_addr(a) for a in double.addresses[1:]}
        st = double.status()["members"]
        assert _inserts(double, 0) == 11
        assert all("insert" not in m["forwarded"] and m["refused"] == 0 for m in st[1:]), st
        if not rs.via_docguard:
            # A secondary read preference is served by a secondary.
            assert db.get_collection("c", read_preference=Secondary()).count_documents({}) == 15
            assert any(m["forwarded"].get("aggregate") for m in double.status()["members"][1:])
        else:
            # docguard pins every connection to the primary and presents itself as the primary
            # of a one-member set: secondaryPreferred is served by the primary (mode secondary
            # has no member to select; docs/cluster.md, "Read preferences").
            before = double.status()["members"][0]["forwarded"].get("aggregate", 0)
            coll = db.get_collection("c", read_preference=SecondaryPreferred())
            assert coll.count_documents({}) == 15
            assert double.status()["members"][0]["forwarded"].get("aggregate", 0) == before + 1
    finally:
        c.close()


def _raw_command(address: str, doc: dict, timeout: float = 5.0) -> dict:
    """One OP_MSG command on a fresh socket, no $readPreference added (drivers always add one)."""
    with socket.create_connection(_addr(address), timeout=timeout) as s:
        s.sendall(rs_double._op_msg(7, 0, doc))
        buf = b""
        while len(buf) < 4 or len(buf) < struct.unpack_from("<i", buf)[0]:
            chunk = s.recv(65536)
            assert chunk, "connection closed"
            buf += chunk
    return rs_double._op_msg_body(buf)[1]


def test_non_primary_refuses(double):
    secondary = double.addresses[1]
    r = _raw_command(secondary, {"insert": "c", "documents": [{}], "$db": "t", "txnNumber": 1})
    assert (r["code"], r["codeName"], r["errorLabels"]) == (10107, "NotWritablePrimary",
                                                            ["RetryableWriteError"])
    r = _raw_command(secondary, {"insert": "c", "documents": [{}], "$db": "t"})
    assert r["code"] == 10107 and "errorLabels" not in r
    r = _raw_command(secondary, {"find": "c", "$db": "t"})
    assert (r["code"], r["codeName"]) == (13435, "NotPrimaryNoSecondaryOk")
    r = _raw_command(secondary, {"find": "c", "$db": "t", "$readPreference": {"mode": "secondary"}})
    assert r["ok"] == 1
    hello = _raw_command(secondary, {"hello": 1, "$db": "admin"})
    assert hello["isWritablePrimary"] is False and hello["secondary"] is True
    assert hello["me"] == secondary and hello["primary"] == double.addresses[0]
    assert "ismaster" not in hello and "topologyVersion" not in hello and "electionId" not in hello
    hello = _raw_command(double.addresses[0], {"isMaster": 1, "$db": "admin"})
    assert hello["ismaster"] is True and "isWritablePrimary" not in hello
    assert isinstance(hello["electionId"], bson.ObjectId) and hello["setName"] == "rs0"


def test_retried_write_answered_once(double, rs):
    """Like a server's transaction table: the same (lsid, txnNumber) retried on the new primary
    gets the first attempt's reply and is not applied twice (FerretDB has no such table)."""
    db = "cl_" + uuid.uuid4().hex[:10]
    cmd = {"insert": "c", "documents": [{"_id": 1}], "$db": db, "txnNumber": 7,
           "lsid": {"id": bson.Binary(uuid.uuid4().bytes, 4)}}
    assert _raw_command(double.addresses[0], cmd)["n"] == 1
    double.elect(1)
    again = _raw_command(double.addresses[1], cmd)
    assert again["ok"] == 1 and again["n"] == 1 and "writeErrors" not in again
    cmd["txnNumber"] = 8  # a new write with the same document is applied, and fails
    assert _raw_command(double.addresses[1], cmd)["writeErrors"][0]["code"] == 11000


def test_stepdown_followed(double, rs, timings):
    c = rs.client()
    try:
        coll = _db(c).c
        coll.insert_one({"before": 1})
        for new in (1, 2, 0):
            before = _inserts(double, new)
            double.elect(new)
            t0 = time.monotonic()
            coll.insert_one({"after": new})  # first attempt may hit the old primary: retried
            secs = time.monotonic() - t0
            timings(f"stepdown to member {new}: retryable insert done after", secs)
            assert _inserts(double, new) == before + 1
            assert secs < RECOVER_S
            if not rs.via_docguard:
                _, secs = harness.wait_for(lambda: c.primary == _addr(double.addresses[new]),
                                           RECOVER_S, what="driver sees the new primary")
        assert coll.count_documents({}) == 4
    finally:
        c.close()


def test_killed_primary_new_election_nothing_lost(double, rs, timings):
    c = rs.client(maxPoolSize=5)
    w = Writer(_db(c).c)
    try:
        w.start()
        w.wait_acks(50, 10)
        t0 = time.monotonic()
        double.kill(0)
        double.elect(1)
        w.wait_acks(50, RECOVER_S * 2)
        gap = w.max_gap_after(t0)
        timings("killed primary + election: longest pause between acknowledged writes", gap)
        assert gap < RECOVER_S
        double.revive(0)   # back as a secondary; then it wins again
        double.elect(0)
        t0 = time.monotonic()
        w.wait_acks(50, RECOVER_S * 2)
        timings("revived member re-elected: longest pause", w.max_gap_after(t0))
        w.finish()
        w.check_nothing_lost()
        assert _inserts(double, 1) > 0 and double.status()["members"][0]["alive"]
    finally:
        w.finish()
        c.close()


def test_several_mongos_one_killed(ferret, targets, timings):
    d = harness.start_double(ferret, mongos=True)
    try:
        t = targets(d.uri())
        c = t.client(localThresholdMS=1000)
        writers = [Writer(_db(c).c) for _ in range(3)]
        for w in writers:
            w.start()
        for w in writers:
            w.wait_acks(30, 10)
        before = [m["forwarded"].get("insert", 0) for m in d.status()["members"]]
        assert sum(1 for n in before if n) >= 2, f"no spread across mongos: {before}"
        t0 = time.monotonic()
        d.kill(1)
        before = [m["forwarded"].get("insert", 0) for m in d.status()["members"]]
        for w in writers:
            w.wait_acks(30, RECOVER_S * 2)
        timings("mongos killed: longest pause", max(w.max_gap_after(t0) for w in writers))
        after = [m["forwarded"].get("insert", 0) for m in d.status()["members"]]
        assert after[1] == before[1] and after[0] + after[2] > before[0] + before[2], after
        for w in writers:
            w.finish()
            w.check_nothing_lost()
        if not t.via_docguard:
            assert c.topology_description.topology_type_name == "Sharded"
        c.close()
    finally:
        d.close()


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-1"])
def test_scram_through_the_double(ferret_auth, targets, mechanism, timings):
    d = harness.start_double(ferret_auth)
    try:
        t = targets(d.uri(authSource="admin"))
        c = t.client(username=harness.ADMIN_USER, password=harness.ADMIN_PASSWORD,
                     authMechanism=mechanism)
        coll = _db(c).c
        coll.insert_one({"a": 1})
        d.kill(0)   # the next write needs a new connection, authenticated again
        d.elect(2)
        t0 = time.monotonic()
        coll.insert_one({"a": 2})
        timings(f"{mechanism}: killed primary, insert re-authenticated after", time.monotonic() - t0)
        assert _inserts(d, 2) == 1 and coll.count_documents({}) == 2
        c.close()
        bad = t.client(username=harness.ADMIN_USER, password="wrong", authMechanism=mechanism)
        with pytest.raises(OperationFailure) as e:
            bad.admin.command("ping")
        assert e.value.code == 18
        bad.close()
        anon = t.client()
        with pytest.raises(OperationFailure) as e:
            anon.t.c.insert_one({})
        assert e.value.code == 13
        anon.close()
    finally:
        d.close()


def test_mongodb_srv_through_private_dns(ferret, targets, workdir, timings):
    why = harness.dns_available()
    if why:
        pytest.skip(why)
    d = harness.start_double(ferret, advertise_host=harness.SRV_TARGET)
    dns = None
    try:
        dns = harness.start_dnsmasq(workdir, [m["port"] for m in d.status()["members"]])
        t = targets(f"mongodb+srv://{harness.SRV_NAME}/?tls=false")
        c = t.client()
        coll = _db(c).c
        coll.insert_one({"srv": 1})
        if not t.via_docguard:
            assert c.topology_description.topology_type_name == "ReplicaSetWithPrimary"
            assert c.primary == _addr(d.addresses[0])
        d.step_down()
        t0 = time.monotonic()
        coll.insert_one({"srv": 2})
        timings("mongodb+srv stepdown: insert done after", time.monotonic() - t0)
        assert _inserts(d, 1) == 1 and coll.count_documents({}) == 2
        c.close()
    finally:
        if dns:
            dns.stop()
        d.close()


def test_op_query_handshake_and_no_compression(double, rs):
    """The first handshake (OP_QUERY isMaster) is answered as OP_REPLY; compression is refused."""
    q = bson.encode({"isMaster": 1})
    payload = struct.pack("<i", 0) + b"admin.$cmd\0" + struct.pack("<ii", 0, -1) + q
    with socket.create_connection(_addr(double.addresses[2]), timeout=5) as s:
        s.sendall(rs_double._frame(9, 0, rs_double.OP_QUERY, payload))
        buf = b""
        while len(buf) < 4 or len(buf) < struct.unpack_from("<i", buf)[0]:
            chunk = s.recv(65536)
            assert chunk
            buf += chunk
    assert struct.unpack_from("<iii", buf, 4)[1:] == (9, rs_double.OP_REPLY)
    doc = bson.decode(buf[36:])
    assert doc["ismaster"] is False and doc["secondary"] is True and doc["me"] == double.addresses[2]
    c = rs.client(compressors="zlib,zstd,snappy")
    try:
        _db(c).c.insert_one({"compressed": False})  # the double saw (and counted) a plain OP_MSG
        assert _inserts(double, 0) == 1
    finally:
        c.close()


def test_cli_and_control_port(ferret, targets, timings):
    """The command-line double and its line protocol, as other languages' suites will drive it."""
    import json
    import subprocess
    import sys

    args = [sys.executable, str(harness.HERE / "rs_double.py"), "--upstream",
            f"127.0.0.1:{ferret.ports['listen']}", "--ports", "0,0,0", "--set-name", "rsCli"]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        ready = json.loads(p.stdout.readline())
        assert ready["event"] == "ready" and ready["primary"] == ready["members"][0]["address"]
        addresses = [m["address"] for m in ready["members"]]
        t = targets("mongodb://" + ",".join(addresses) + "/?replicaSet=rsCli")
        c = t.client()
        coll = _db(c).c
        coll.insert_one({"n": 1})
        with socket.create_connection(_addr(ready["control"]), timeout=5) as s:
            f = s.makefile("rw")

            def ask(line: str) -> str:
                f.write(line + "\n")
                f.flush()
                return f.readline().strip()

            assert ask("bogus").startswith("err usage:")
            assert ask("elect 9").startswith("err ")
            st = json.loads(ask("stepdown").split(" ", 1)[1])
            assert st["primary"] == addresses[1]
            t0 = time.monotonic()
            coll.insert_one({"n": 2})
            timings("CLI stepdown: insert done after", time.monotonic() - t0)
            st = json.loads(ask("killprimary").split(" ", 1)[1])
            assert st["members"][1]["alive"] is False
            st = json.loads(ask(f"elect {addresses[2]}").split(" ", 1)[1])
            assert st["primary"] == addresses[2]
            coll.insert_one({"n": 3})
            assert json.loads(ask("revive 1")[3:])["members"][1]["alive"] is True
            assert json.loads(ask("status")[3:])["members"][2]["forwarded"]["insert"] >= 1
            assert coll.count_documents({}) == 3
            c.close()
            assert ask("quit").startswith("ok ")
        assert p.wait(10) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(5)


def _build_mongoc_follow(workdir):
    import shutil
    import subprocess

    exe = workdir / "mongoc_follow"
    if exe.exists():
        return exe
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc or not shutil.which("pkg-config"):
        pytest.skip("no C compiler or pkg-config")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libmongoc-1.0"],
                           capture_output=True, text=True, timeout=30)
    if flags.returncode:
        pytest.skip("libmongoc-1.0 not found by pkg-config")
    r = subprocess.run([cc, "-O1", "-o", str(exe), str(harness.HERE / "mongoc_follow.c"),
                        *flags.stdout.split()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return exe


def test_libmongoc_follows(double, rs, workdir, timings):
    import select
    import subprocess

    exe = _build_mongoc_follow(workdir)
    p = subprocess.Popen([str(exe), rs.uri(heartbeatFrequencyMS=500, serverSelectionTimeoutMS=10000)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(cmd: str, timeout: float = 15) -> str:
        p.stdin.write(cmd + "\n")
        p.stdin.flush()
        ready, _, _ = select.select([p.stdout], [], [], timeout)
        assert ready, f"libmongoc did not answer {cmd!r} within {timeout}s"
        return p.stdout.readline().strip()

    try:
        assert ask("insert") == "ok"
        for new, kill in ((1, None), (2, 1)):
            if kill is not None:
                double.kill(kill)
            double.elect(new)
            t0 = time.monotonic()
            if not rs.via_docguard:
                harness.wait_for(lambda: ask("primary") == "ok " + double.addresses[new], RECOVER_S,
                                 interval=0.05, what="libmongoc selects the new primary")
                timings(f"libmongoc: new primary {new}{' (old killed)' if kill else ''} "
                        "selected after", time.monotonic() - t0)
            assert ask("insert") == "ok"
            assert _inserts(double, new) == 1
    finally:
        p.stdin.close()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)


class Reader(threading.Thread):
    """Primary reads (retryable) in a loop; records errors."""

    def __init__(self, coll):
        super().__init__(daemon=True)
        self.coll, self.stop_flag = coll, threading.Event()
        self.reads, self.errors = 0, []

    def run(self):
        while not self.stop_flag.is_set():
            try:
                self.coll.find_one({}, sort=[("_id", -1)])
                self.reads += 1
                self.stop_flag.wait(0.005)  # an application, not a benchmark: leave CPU to others
            except pymongo.errors.PyMongoError as e:
                self.errors.append(f"{type(e).__name__}: {e}")

    def finish(self):
        self.stop_flag.set()
        self.join(15)
        assert not self.is_alive(), "reader thread hung"


NODE_CLIENT = harness.HERE / "node_load_client.mjs"
NODE_MODULES = harness.HERE.parent / "integration" / "node" / "node_modules"


def _node_or_fail() -> str:
    import shutil

    node = shutil.which("node")
    if not node or not (NODE_MODULES / "mongodb").is_dir():
        pytest.fail("the Node.js driver is needed: node on PATH and `npm install` in "
                    "tests/integration/node (scripts/install-deps.sh does both)")
    return node


class NodeClient:
    """A Node.js driver client (node_load_client.mjs in its own process) writing and reading like
    a Writer and a Reader together; the same interface as Writer for the checks. Acknowledged ids
    arrive as JSON lines and are timed on arrival here."""

    def __init__(self, node: str, uri: str, coll, log_path):
        import subprocess

        self.coll, self.uri, self.log_path = coll, uri, log_path
        self.acked: list[int] = []
        self.ack_times: list[float] = []
        self.errors: list[str] = []
        self.unretried: list[str] = []  # network errors the driver did not retry (see the .mjs)
        # MongoClients replaced because the driver's monitor was stuck (see the .mjs): (role,
        # detail), the times the writer's were reported, and the operations done again.
        self.rebuilt: list[tuple[str, str]] = []
        self.writer_rebuilt_times: list[float] = []
        self.retried_after_rebuild: list[str] = []
        self.reads = 0
        self.done = threading.Event()
        self.popen = subprocess.Popen(
            [node, str(NODE_CLIENT), uri, coll.database.name, coll.name],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(log_path, "w"), text=True,
            preexec_fn=harness.base._pdeathsig)
        self._thread = threading.Thread(target=self._read, daemon=True)

    def start(self):
        self._thread.start()

    def _read(self):
        import json

        for line in self.popen.stdout:
            try:
                ev = json.loads(line)
            except ValueError:
                self.errors.append(f"node: not JSON: {line.strip()[:200]}")
                continue
            if "ack" in ev:
                self.acked.append(ev["ack"])
                self.ack_times.append(time.monotonic())
            elif "unretried" in ev:
                self.unretried.append(f"{ev['unretried']}: {ev['error']}")
            elif "rebuilt_after_stuck_monitor" in ev:
                # The driver's monitor hangs on a write to a socket destroyed before its close is
                # handled; through a proxy the client sees one server, so it cannot route around
                # it: the client replaced that MongoClient. Counted, and bounded by the test.
                role = ev["rebuilt_after_stuck_monitor"]
                self.rebuilt.append((role, f"node {role}: heartbeat to {ev['address']} neither "
                                     f"succeeded nor failed for {ev['seconds']:.1f} s "
                                     f"(log {self.log_path})"))
                if role == "writer":
                    self.writer_rebuilt_times.append(time.monotonic())
            elif "retry_after_rebuild" in ev:
                self.retried_after_rebuild.append(f"{ev['retry_after_rebuild']}: {ev['error']}")
            elif "error" in ev:
                self.errors.append(f"node {ev.get('op')}: {ev['error']} (log {self.log_path})")
            elif ev.get("event") == "done":
                self.reads = ev["reads"]
                if sorted(ev["acked"]) != sorted(self.acked):
                    self.errors.append("node: final acknowledged list differs from the stream")
            elif ev.get("event") == "failed":
                self.errors.append(f"node: {ev['error']}")
        self.done.set()

    def finish(self):
        if self.popen.poll() is None:
            try:
                self.popen.stdin.write("stop\n")
                self.popen.stdin.close()
            except OSError:
                pass
        self.done.wait(20)
        try:
            rc = self.popen.wait(10)
        except Exception:
            self.popen.kill()
            raise AssertionError("node client hung") from None
        if rc != 0:
            self.errors.append(f"node exited {rc}: {harness.base._tail(self.log_path)}")

    def stop(self):
        if self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait(5)

    max_gap_after = Writer.max_gap_after

    def check_nothing_lost(self):
        # A Node client's error says little alone: the driver's own events (server description
        # changes, heartbeats, pool clears) and docguard's debug log around it say why.
        if self.errors:
            logs = sorted(self.log_path.parent.glob("docguard/docguard-*.log"))
            docguard = "\n".join(harness.base._tail(p, 80) for p in logs)
            raise AssertionError(
                f"clients saw errors: {self.errors[:5]}\n"
                f"--- the Node driver's events ({self.log_path}):\n"
                f"{harness.base._tail(self.log_path, 80)}\n--- docguard's log:\n{docguard}")
        Writer.check_nothing_lost(self)


def _wait_all(writers: list[Writer], count: int, timeout: float) -> None:
    """Until every writer has `count` more acknowledged writes (or one saw an error). On a timeout
    the error names the writers that fell behind, how long each has waited, and where a PyMongo
    writer's thread stands: a stalled writer is the one thing this test exists to catch."""
    starts = [len(w.acked) for w in writers]
    try:
        harness.wait_for(lambda: all(len(w.acked) >= s + count for w, s in zip(writers, starts))
                         or any(w.errors for w in writers), timeout,
                         what=f"{count} more acknowledged writes from every writer")
    except AssertionError as e:
        raise AssertionError(f"{e}\n" + _stalled(writers, starts, count)) from None


def _stalled(writers: list, starts: list[int], count: int) -> str:
    import sys
    import traceback

    now, frames, lines = time.monotonic(), sys._current_frames(), []
    for i, (w, s) in enumerate(zip(writers, starts)):
        if len(w.acked) >= s + count:
            continue
        last = f"{now - w.ack_times[-1]:.1f} s ago" if w.ack_times else "never"
        lines.append(f"writer {i} ({type(w).__name__}): {len(w.acked) - s} of {count} more, "
                     f"last acknowledged write {last}")
        if isinstance(w, NodeClient):
            lines.append(f"  its driver's events: {w.log_path}")
        elif w.ident in frames:
            stack = traceback.format_stack(frames[w.ident])[-6:]
            lines.append("  " + "  ".join(stack))
    return "\n".join(lines)


def test_failover_under_load(double_process, targets, timings, workdir):
    """The issue's failover test, first against the double: several clients (4 PyMongo, 2 Node.js
    driver) writing and reading while the primary changes three times and one member is killed.
    Nothing lost, no client errors, every client recovers within a few seconds. The double runs as
    its own process here, and each Node client in its own, so that the clients' threads do not
    share the double's interpreter."""
    double = double_process
    rs = targets(double.uri())
    node = _node_or_fail()
    clients = [rs.client(maxPoolSize=4) for _ in range(4)]
    dbname = "cl_" + uuid.uuid4().hex[:10]
    writers = [Writer(c[dbname][f"w{i}"]) for i, c in enumerate(clients)]
    readers = [Reader(c[dbname][f"w{i}"]) for i, c in enumerate(clients)]
    # Node clients use the same URI as the PyMongo ones (the double's, or docguard's).
    node_uri = rs.uri(heartbeatFrequencyMS=500)
    nodes = [NodeClient(node, node_uri, clients[0][dbname][f"node{i}"],
                        workdir / f"node-load-{dbname}-{i}.log") for i in range(2)]
    writers += nodes
    try:
        for t in writers + readers:
            t.start()
        _wait_all(writers, 10, 30)  # Node's first connection takes a moment
        steps = [("stepdown to 1", lambda: double.elect(1)),
                 ("stepdown to 2", lambda: double.elect(2)),
                 ("member 2 killed, 0 elected", lambda: (double.kill(2), double.elect(0))),
                 ("stepdown to 1 (2 still dead)", lambda: double.elect(1))]
        for what, act in steps:
            t0 = time.monotonic()
            act()
            _wait_all(writers, 10, RECOVER_S * 3)
            # A Node client that replaced its writing MongoClient in this step (a stuck driver
            # monitor, see NodeClient) first waited for the stuck heartbeat to outlast the
            # client's own bound: it must follow within RECOVER_S of its replacement, the others
            # within RECOVER_S of t0.
            rebuilt = {id(n): max(t for t in n.writer_rebuilt_times if t >= t0)
                       for n in nodes if any(t >= t0 for t in n.writer_rebuilt_times)}
            gap = max(w.max_gap_after(t0) for w in writers if id(w) not in rebuilt)
            timings(f"under load, {what}: longest pause of any writer", gap)
            assert gap < RECOVER_S, what
            for n in nodes:
                if id(n) in rebuilt:
                    timings(f"under load, {what}: pause of a Node client that replaced its "
                            "MongoClient, in all", n.max_gap_after(t0))
                    after = n.max_gap_after(rebuilt[id(n)])
                    timings(f"under load, {what}: and after its replacement", after)
                    assert after < RECOVER_S, f"{what}: after replacing its MongoClient"
        for t in writers + readers:
            t.finish()
        for w in writers:
            w.check_nothing_lost()
        assert not [e for r in readers for e in r.errors], [r.errors[:3] for r in readers]
        assert all(r.reads > 0 for r in readers + nodes)
        timings("under load: acknowledged writes (count)", float(sum(len(w.acked) for w in writers)))
        timings("under load: of which by Node.js clients (count)",
                float(sum(len(n.acked) for n in nodes)))
        # Node driver 6.x leaves a write in flight on a killed member unretried when its pool was
        # cleared first (by the monitor or another operation): the application retried it once.
        # At most once per client: only one member is killed.
        unretried = [u for n in nodes for u in n.unretried]
        timings("under load: Node writes the driver did not retry, retried by the client (count)",
                float(len(unretried)))
        assert all(len(n.unretried) <= 1 for n in nodes), unretried
        # Node driver 6.x's monitor can hang for good on a write to a socket Node destroyed before
        # the driver handled its close; through a proxy the client sees one server, so it cannot
        # route around it: the client replaced its MongoClient and did the failed operation again
        # (see node_load_client.mjs). At most once per MongoClient (a Node client has two, the
        # writer's and the reader's): only one member is killed.
        rebuilt = [(r, n.retried_after_rebuild) for n in nodes for r in n.rebuilt]
        timings("under load: Node MongoClients replaced after a stuck driver monitor (count)",
                float(len(rebuilt)))
        timings("under load: Node operations failed on a replaced MongoClient, done again (count)",
                float(sum(len(n.retried_after_rebuild) for n in nodes)))
        assert all(len(n.rebuilt) == len({role for role, _ in n.rebuilt}) for n in nodes), rebuilt
    finally:
        for t in writers + readers:
            if isinstance(t, NodeClient):
                t.stop()
            else:
                t.stop_flag.set()
        for c in clients:
            c.close()
