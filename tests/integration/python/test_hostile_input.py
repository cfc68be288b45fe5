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
        assert body["errInfo"]["rule"] == "hostile-indexes"
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
