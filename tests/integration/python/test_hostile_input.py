"""Hostile input through docguard in front of FerretDB, with a require_index rule in block mode:
names of megabytes in filters (an operator name the server itself fails, a field name docguard
refuses with a refusal of a few KiB) are logged in lines of a few KiB and leave no memory behind (docguard's VmRSS comes back
within 100 MiB of where it started once the load is over)."""

from __future__ import annotations

import socket
import struct
import time

import bson
import pymongo
import pytest
from pymongo.errors import OperationFailure

import harness
from harness import rss_mib

pytestmark = pytest.mark.proxy

CONFIG = """\
rules:
  - id: hostile-indexes
    match: "hostile.*"
    action: block
    require_index: true
  - id: hostile-schema
    match: "hostile.checked"
    action: block
    json_schema:
      properties:
        blob: {bsonType: int}
introspection:
  max_commands_per_second: 50
  jitter: 0
  interval: 2s
"""

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def proxy(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("hostile")
    fdb = harness.start_ferretdb(workdir)
    direct_uri = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
    direct = pymongo.MongoClient(direct_uri, directConnection=True)
    direct.hostile.orders.insert_many([{"_id": i, "status": "open", "total": i} for i in range(5)])
    direct.hostile.orders.create_index("status")
    config = workdir / "hostile.yaml"
    config.write_text(CONFIG)
    dg = harness.start_docguard(direct_uri, workdir, config=config)
    client = pymongo.MongoClient(f"mongodb://127.0.0.1:{dg.ports['listen']}",
                                 serverSelectionTimeoutMS=10000)
    try:
        harness.wait_for_introspection_pass(dg)
        yield dg, client
    finally:
        client.close()
        direct.close()
        dg.stop()
        fdb.stop()


def test_huge_operator_names_leave_no_memory_behind(proxy):
    dg, client = proxy
    orders = client.hostile.orders
    assert len(list(orders.find({"status": "open"}))) == 5  # served: the rule knows the index
    start = rss_mib(dg.popen.pid)
    for i in range(40):
        # Each a different name, so each is a new shape for the workload ledger.
        name = "$" + chr(ord("a") + i % 26) * (2 * MIB) + str(i)
        # An operator the guardrail does not know is never refused by docguard (the server
        # judges it): the query goes upstream, which fails it with its own error (FerretDB:
        # BadValue, unknown operator; its reply is forwarded as the server wrote it), and
        # docguard keeps only a bounded shape of it.
        with pytest.raises(OperationFailure) as failed:
            list(orders.find({"total": {name: 1}}))
        assert failed.value.code != 291
    # Per-connection buffers shrink after each message; the spare block of an io thread and
    # the heap's free pages go back within seconds (the memory release runs every 5 s).
    bound = 100 + harness.sanitizer_quarantine_mib()
    deadline = time.monotonic() + 20
    while rss_mib(dg.popen.pid) - start >= bound and time.monotonic() < deadline:
        time.sleep(0.5)
    assert rss_mib(dg.popen.pid) - start < bound, (start, rss_mib(dg.popen.pid))
    assert len(list(orders.find({"status": "open"}))) == 5  # still serving


def op_msg(request_id: int, body: bytes) -> bytes:
    payload = struct.pack("<I", 0) + b"\x00" + body
    return struct.pack("<iiii", 16 + len(payload), request_id, 0, 2013) + payload


def read_message(sock: socket.socket) -> bytes:
    data = b""
    while len(data) < 16 or len(data) < struct.unpack("<i", data[:4])[0]:
        chunk = sock.recv(1 << 20)
        assert chunk, "the connection closed"
        data += chunk
    return data


def test_the_refusal_of_a_huge_field_name_is_small(proxy):
    dg, _ = proxy
    field = "f" * (6 * MIB)
    with socket.create_connection(("127.0.0.1", dg.ports["listen"]), timeout=30) as sock:
        sock.sendall(op_msg(1, bson.encode({"hello": 1, "$db": "admin"})))
        read_message(sock)
        sock.sendall(op_msg(2, bson.encode({"find": "orders", "filter": {field: 1},
                                            "$db": "hostile"})))
        reply = read_message(sock)
        assert len(reply) < 64 * 1024, len(reply)
        body = bson.decode(reply[21:21 + struct.unpack("<i", reply[21:25])[0]])
        assert body["code"] == 291
        assert body["errInfo"]["rule"] == "require_index"
        assert body["errInfo"]["shape"].startswith("{fff")
        assert body["errInfo"]["shape"].endswith("...: ?}")
        # The same connection goes on.
        sock.sendall(op_msg(3, bson.encode({"ping": 1, "$db": "admin"})))
        assert bson.decode(read_message(sock)[21:])["ok"] == 1.0
    # Every log line of this docguard, the violations of both tests among them, is a few KiB.
    with open(dg.log_path, "rb") as log:
        lines = log.read().splitlines()
    assert any(b"require_index" in line for line in lines)
    assert max(len(line) for line in lines) < 16 * 1024


def peak_mib(pid: int) -> float:
    """VmHWM: the process's peak resident memory since the last reset_peak()."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def reset_peak(pid: int) -> None:
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


def elem_match_chain(levels: int, name_bytes: int) -> dict:
    inner: dict = {"x" * name_bytes + "0": 1}
    for i in range(1, levels):
        inner = {chr(ord("a") + i % 26) * name_bytes + str(i): {"$elemMatch": inner}}
    return inner


HOSTILE_FILTERS = {
    # One long name over an $all: every value a predicate on the same path.
    "long name over $all of 2,000": lambda: {"n" * 60_000: {"$all": list(range(2000))}},
    # 30 levels of $elemMatch under names of 500 KiB: each level's path repeats the ones above.
    "$elemMatch chain of 500 KiB names (15 MiB)": lambda: elem_match_chain(30, 500_000),
    # 4,000 $or branches on names of 4 KiB.
    "$or of 4,000 branches (16 MiB)": lambda: {"$or": [{f"{i:05d}" + "o" * 4000: i}
                                                        for i in range(4000)]},
    # An $all of a million values.
    "$all of 1,000,000": lambda: {"status": {"$all": list(range(1_000_000))}},
    # An $in of a million values: one predicate, a million points for the bounds.
    "$in of 1,000,000": lambda: {"status": {"$in": list(range(1_000_000))}},
    # $nor over 2,000 $and branches of 8 predicates on names of 800 bytes.
    "$nor of 2,000 $and branches": lambda: {"$nor": [
        {"$and": [{f"{i:05d}{k}" + "a" * 800: {"$gt": k}} for k in range(8)]}
        for i in range(2000)]},
}


def inspection_seconds(dg) -> float:
    """docguard_inspection_seconds' sum: the workers' time decoding and judging requests."""
    return sum(v for (name, _), v in harness.metrics(dg).items()
               if name == "docguard_inspection_seconds_sum")


def test_a_crafted_filter_costs_bounded_memory_and_bystanders_go_on(proxy):
    """Each filter near the 16 MiB message limit, judged by the guardrail: docguard's peak
    resident memory rises by less than 64 MiB for each, and a bystander connection's pings go
    on meanwhile (their longest wait is printed, with the worker's time on the filter)."""
    import threading

    dg, _ = proxy
    pid = dg.popen.pid
    bound = 64 + harness.sanitizer_quarantine_mib()
    for what, make in HOSTILE_FILTERS.items():
        body = bson.encode({"find": "orders", "filter": make(), "$db": "hostile"})
        assert len(body) < 16 * MIB, (what, len(body))
        waits: list[float] = []
        stop = threading.Event()

        def bystander() -> None:
            with socket.create_connection(("127.0.0.1", dg.ports["listen"]), timeout=30) as s:
                n = 100
                while not stop.is_set():
                    n += 1
                    started = time.monotonic()
                    s.sendall(op_msg(n, bson.encode({"ping": 1, "$db": "admin"})))
                    read_message(s)
                    waits.append(time.monotonic() - started)
                    time.sleep(0.005)

        pinger = threading.Thread(target=bystander)
        pinger.start()
        time.sleep(0.1)
        before = rss_mib(pid)
        reset_peak(pid)
        inspected_before = inspection_seconds(dg)
        with socket.create_connection(("127.0.0.1", dg.ports["listen"]), timeout=60) as sock:
            started = time.monotonic()
            sock.sendall(op_msg(7, body))
            reply = read_message(sock)
            took = time.monotonic() - started
        stop.set()
        pinger.join(30)
        # The worker's time on the message: decoding it and judging it (the bystander's pings
        # add microseconds), apart from reading it and the upstream's answer.
        worker_ms = (inspection_seconds(dg) - inspected_before) * 1000
        extra = peak_mib(pid) - before
        code = bson.decode(reply[21:21 + struct.unpack("<i", reply[21:25])[0]]).get("code")
        print(f"{what}: {len(body) / MIB:.1f} MiB filter, answered in {took * 1000:.0f} ms "
              f"(code {code}), worker {worker_ms:.1f} ms, peak +{extra:.1f} MiB, longest bystander ping "
              f"{max(waits) * 1000:.1f} ms of {len(waits)}")
        if not harness.thread_sanitized():  # its shadow memory is not docguard's
            assert extra < bound, (what, extra)
        assert waits, what


def test_a_huge_failing_insert_gets_the_truncated_error_in_bounded_memory(proxy):
    """A 15 MB document failing the $jsonSchema: the whole details would hold the 15 MB value
    and pass the server's 12 MiB bound, so errInfo is the truncated one (no specifiedAs, no
    consideredValue), and building it costs docguard less than 64 MiB more than it had."""
    dg, _ = proxy
    pid = dg.popen.pid
    body = bson.encode({"insert": "checked", "documents": [{"_id": 1, "blob": "b" * 15_000_000}],
                        "$db": "hostile"})
    before = rss_mib(pid)
    reset_peak(pid)
    with socket.create_connection(("127.0.0.1", dg.ports["listen"]), timeout=60) as sock:
        sock.sendall(op_msg(9, body))
        reply = read_message(sock)
    extra = peak_mib(pid) - before
    doc = bson.decode(reply[21:21 + struct.unpack("<i", reply[21:25])[0]])
    error = doc["writeErrors"][0]
    assert error["code"] == 121
    info = error["errInfo"]
    assert info["failingDocumentId"] == 1 and info["truncated"] is True, info
    entry = info["details"]["schemaRulesNotSatisfied"][0]["propertiesNotSatisfied"][0]
    assert entry["propertyName"] == "blob"
    assert entry["details"][0]["operatorName"] == "bsonType"
    assert "consideredValue" not in entry["details"][0] and "specifiedAs" not in entry["details"][0]
    print(f"15 MB failing insert: peak +{extra:.1f} MiB, reply {len(reply)} bytes")
    if not harness.thread_sanitized():  # its shadow memory is not docguard's
        assert extra < 64 + harness.sanitizer_quarantine_mib(), extra
