"""OP_MSG section kind 3 (trace context) through docguard in front of FerretDB, on raw sockets:
FerretDB 1.24 reports wire version 21, so no driver sends the section to it.

FerretDB, like every server before wire version 29, closes the connection when a message holds
a kind-3 section ("kind is 3"). docguard judges the message with its trace context (and logs the
traceparent), then forwards it without the section to an upstream whose hello announced a
maxWireVersion below 29, so the client is answered and keeps its connection; to a newer server
the client's bytes go as sent. The tests below assert that: a traced find is judged and
answered, a traced find a rule refuses gets the normal refusal, and the connection stays open
after both."""

from __future__ import annotations

import socket
import struct

import bson
import pymongo
import pytest

import harness

pytestmark = pytest.mark.proxy

TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

CONFIG = """\
rules:
  - id: trace-indexes
    match: "trace.*"
    action: block
    require_index: true
introspection:
  max_commands_per_second: 50
  jitter: 0
  interval: 2s
"""


def op_msg(request_id: int, body: dict, trace: dict | None = None) -> bytes:
    sections = b"\x00" + bson.encode(body)
    if trace is not None:
        sections += b"\x03" + bson.encode(trace)
    payload = struct.pack("<I", 0) + sections
    return struct.pack("<iiii", 16 + len(payload), request_id, 0, 2013) + payload


def read_reply(sock: socket.socket) -> dict | None:
    """The body of the next OP_MSG reply, or None when the connection closed."""
    data = b""
    while len(data) < 16 or len(data) < struct.unpack("<i", data[:4])[0]:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk
    assert struct.unpack("<i", data[12:16])[0] == 2013
    assert data[20] == 0
    length = struct.unpack("<i", data[21:25])[0]
    return bson.decode(data[21:21 + length])


def traced(name: str) -> dict:
    return {"otel": {"traceparent": TRACEPARENT}, "name": name}


@pytest.fixture(scope="module")
def proxy(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("trace-context")
    fdb = harness.start_ferretdb(workdir)
    direct_uri = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
    direct = pymongo.MongoClient(direct_uri, directConnection=True)
    direct.trace.orders.insert_many([{"_id": i, "status": "open" if i % 2 else "done", "total": i}
                                     for i in range(10)])
    direct.trace.orders.create_index("status")
    config = workdir / "trace.yaml"
    config.write_text(CONFIG)
    dg = harness.start_docguard(direct_uri, workdir, config=config,
                                extra_args=["--log-level", "debug"])
    try:
        harness.wait_for_introspection_pass(dg)
        yield dg
    finally:
        direct.close()
        dg.stop()
        fdb.stop()


@pytest.fixture()
def conn(proxy):
    sock = socket.create_connection(("127.0.0.1", proxy.ports["listen"]), timeout=10)
    sock.sendall(op_msg(1, {"hello": 1, "$db": "admin",
                            "client": {"application": {"name": "trace-test"}}}))
    hello = read_reply(sock)
    assert hello is not None and hello["ok"] == 1.0
    # Why docguard leaves the section out here (see the module's text).
    assert hello["maxWireVersion"] < 29
    yield sock
    sock.close()


def ping(sock: socket.socket, request_id: int) -> dict | None:
    sock.sendall(op_msg(request_id, {"ping": 1, "$db": "admin"}))
    return read_reply(sock)


def test_a_traced_find_is_judged_and_answered(proxy, conn):
    conn.sendall(op_msg(2, {"find": "orders", "filter": {"status": "open"}, "$db": "trace"},
                        traced("served")))
    reply = read_reply(conn)
    assert reply is not None, "the connection closed"
    assert reply["ok"] == 1.0, reply
    assert sorted(d["_id"] for d in reply["cursor"]["firstBatch"]) == [1, 3, 5, 7, 9]
    assert ping(conn, 3) == {"ok": 1.0}
    # The request's debug line carries the traceparent.
    lines = harness.parse_json_lines(harness.read_log_lines(proxy.log_path))
    assert any(line.get("traceparent") == TRACEPARENT and line.get("command") == "find"
               for line in lines), lines[-5:]


def test_a_traced_find_a_rule_refuses_gets_the_normal_refusal(proxy, conn):
    query = {"find": "orders", "filter": {"total": 3}, "$db": "trace"}
    conn.sendall(op_msg(2, query, traced("refused")))
    with_trace = read_reply(conn)
    assert with_trace is not None, "the connection closed"
    assert with_trace["ok"] == 0.0
    assert with_trace["code"] == 291
    assert with_trace["errInfo"]["rule"] == "require_index"
    assert with_trace["errInfo"]["shape"] == "{total: ?}"
    # The same refusal as the same find without a trace context.
    conn.sendall(op_msg(3, query))
    assert read_reply(conn) == with_trace
    assert ping(conn, 4) == {"ok": 1.0}


def test_a_second_trace_context_is_a_protocol_error_of_that_connection_only(proxy, conn):
    message = bytearray(op_msg(2, {"ping": 1, "$db": "admin"}, traced("twice")))
    second = b"\x03" + bson.encode(traced("again"))
    message += second
    message[0:4] = struct.pack("<i", len(message))
    conn.sendall(bytes(message))
    assert read_reply(conn) is None  # closed, as for a second body
    other = socket.create_connection(("127.0.0.1", proxy.ports["listen"]), timeout=10)
    try:
        assert ping(other, 1) == {"ok": 1.0}
    finally:
        other.close()
