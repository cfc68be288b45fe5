"""Raw-socket wire tests and failure handling: malformed frames, opcode families, upstream down."""

from __future__ import annotations

import socket
import struct
import time

import bson
import pymongo
import pytest

import harness

OP_REPLY, OP_QUERY, OP_MSG = 1, 2004, 2013


def header(length: int, request_id: int, response_to: int, opcode: int) -> bytes:
    return struct.pack("<iiii", length, request_id, response_to, opcode)


def op_msg(body: dict, request_id: int = 1, flags: int = 0, sections: bytes | None = None) -> bytes:
    payload = struct.pack("<I", flags) + (sections if sections is not None else b"\x00" + bson.encode(body))
    return header(16 + len(payload), request_id, 0, OP_MSG) + payload


def op_query_hello(request_id: int = 1) -> bytes:
    payload = (struct.pack("<i", 0) + b"admin.$cmd\x00" + struct.pack("<ii", 0, -1)
               + bson.encode({"isMaster": 1}))
    return header(16 + len(payload), request_id, 0, OP_QUERY) + payload


def recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError(f"closed after {len(buf)} of {n} bytes")
        buf += chunk
    return buf


def read_reply(sock: socket.socket) -> tuple[int, int, bytes]:
    """(opcode, responseTo, body bytes after the header)."""
    length, _rid, response_to, opcode = struct.unpack("<iiii", recv_exact(sock, 16))
    return opcode, response_to, recv_exact(sock, length - 16)


def closed_by_peer(sock: socket.socket, timeout: float = 5.0) -> bool:
    """True if the peer closes the socket within timeout (an error reply before closing is fine)."""
    sock.settimeout(0.25)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = sock.recv(65536)
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return True
        if not data:
            return True
    return False


def connect(env) -> socket.socket:
    s = socket.create_connection((env.host, env.port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def test_raw_op_msg_hello_gets_op_msg_reply(env):
    with connect(env) as s:
        s.sendall(op_msg({"hello": 1, "$db": "admin"}, request_id=77))
        opcode, response_to, body = read_reply(s)
        assert opcode == OP_MSG and response_to == 77
        flags = struct.unpack_from("<I", body)[0]
        assert body[4] == 0
        doc = bson.decode(body[5:5 + struct.unpack_from("<i", body, 5)[0]])
        assert doc["ok"] == 1.0 and "maxWireVersion" in doc
        if flags & 1:  # checksum present: the message ends with 4 more bytes
            assert len(body) == 5 + len(bson.encode(doc)) + 4
        # and the connection keeps working for a second command
        s.sendall(op_msg({"ping": 1, "$db": "admin"}, request_id=78))
        opcode, response_to, _ = read_reply(s)
        assert opcode == OP_MSG and response_to == 78


def test_raw_op_query_hello_gets_op_reply(env):
    """Legacy OP_QUERY handshake must be answered in the OP_REPLY family."""
    with connect(env) as s:
        s.sendall(op_query_hello(request_id=5))
        opcode, response_to, body = read_reply(s)
        assert opcode == OP_REPLY and response_to == 5
        _flags, _cursor, _start, nret = struct.unpack_from("<iqii", body)
        assert nret == 1
        doc = bson.decode(body[20:])
        assert doc["ok"] == 1.0
        if env.proxied:
            # The default persona: primary of a one-member set that names only docguard.
            addr = f"{env.host}:{env.port}"
            assert doc["ismaster"] is True and "msg" not in doc
            assert doc["setName"] == "docguard" and doc["hosts"] == [addr] and doc["me"] == addr


MALFORMED = {
    "length_8": header(8, 1, 0, OP_MSG),
    "length_0": header(0, 1, 0, OP_MSG),
    "length_negative": header(-5, 1, 0, OP_MSG),
    "declared_100MB": header(100_000_000, 1, 0, OP_MSG) + b"\x00" * 64,
    "opmsg_unknown_section_kind": op_msg({}, sections=b"\x07" + bson.encode({"ping": 1, "$db": "admin"})),
    "opmsg_bson_overruns_message": (lambda b: header(16 + 4 + 1 + len(b) - 10, 1, 0, OP_MSG)
                                    + struct.pack("<I", 0) + b"\x00" + b[:-10])(
        bson.encode({"ping": 1, "$db": "admin", "pad": "z" * 40})),
    "opmsg_unknown_required_flag_bit": op_msg({"ping": 1, "$db": "admin"}, flags=1 << 4),
}

# Cases FerretDB itself does not close the connection for (it answers with an error instead);
# docguard must close on all of them.
FERRETDB_LENIENT = {"opmsg_unknown_required_flag_bit"}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_frame_closes_only_that_connection(env, client, case):
    if not env.proxied and case in FERRETDB_LENIENT:
        pytest.skip("FerretDB answers this case with an error instead of closing")
    # another client, connected before and still in use after
    other = env.client(maxPoolSize=1)
    other.it_wire.t.insert_one({"before": case})
    errors_before = env.metric("docguard_protocol_errors_total") if env.proxied else 0
    log_before = len(env.log_lines())

    s = connect(env)
    try:
        s.sendall(MALFORMED[case])
        assert closed_by_peer(s, timeout=5.0), f"{case}: connection was not closed"
    finally:
        s.close()

    assert other.it_wire.t.find_one({"before": case}) is not None
    assert client.admin.command("ping")["ok"] == 1.0
    other.it_wire.t.delete_many({})
    other.close()
    if env.proxied:
        assert harness.port_open(env.port)
        assert env.metric("docguard_protocol_errors_total") > errors_before
        deadline = time.monotonic() + 3
        while len(env.log_lines()) <= log_before and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(env.log_lines()) > log_before, "no log line for the closed connection"


def test_frame_arriving_one_byte_at_a_time(env):
    msg = op_msg({"ping": 1, "$db": "admin"}, request_id=9)
    with connect(env) as s:
        for i in range(len(msg)):
            s.sendall(msg[i:i + 1])
            time.sleep(0.002)
        opcode, response_to, _ = read_reply(s)
        assert opcode == OP_MSG and response_to == 9


def test_pipelined_requests_on_one_socket(env):
    """Several requests written back to back in one send are answered in order."""
    msgs = b"".join(op_msg({"ping": 1, "$db": "admin"}, request_id=100 + i) for i in range(20))
    with connect(env) as s:
        s.sendall(msgs)
        got = [read_reply(s)[1] for _ in range(20)]
    assert got == [100 + i for i in range(20)]


@pytest.mark.proxy
def test_upstream_unreachable_then_recovers(env, tmp_workdir):
    dead_port = harness.free_port()  # nothing listens here
    dg = harness.start_docguard(f"mongodb://127.0.0.1:{dead_port}", tmp_workdir / "unreachable",
                                wait_upstream=False)
    fdb = None
    try:
        admin = f"127.0.0.1:{dg.ports['admin']}"
        uri = f"mongodb://127.0.0.1:{dg.ports['listen']}"
        err_before = harness.metric_sum(harness.fetch_metrics(admin), "docguard_upstream_errors_total")
        for _attempt in range(2):
            t0 = time.monotonic()
            c = pymongo.MongoClient(uri, serverSelectionTimeoutMS=2000, connectTimeoutMS=2000,
                                    socketTimeoutMS=3000)
            with pytest.raises(pymongo.errors.PyMongoError):
                c.admin.command("ping")
            c.close()
            assert time.monotonic() - t0 < 10, "client error should come quickly"
            assert dg.alive(), "docguard exited when the upstream was unreachable"
            assert harness.http_get(f"http://{admin}/healthz")[0] == 200
        err_after = harness.metric_sum(harness.fetch_metrics(admin), "docguard_upstream_errors_total")
        assert err_after > err_before
        assert any(ln.strip() for ln in harness.read_log_lines(dg.log_path)), "no log line"

        # the upstream comes up: the next connection goes through
        fdb = harness.start_ferretdb(tmp_workdir / "late-ferret", port=dead_port)
        c = pymongo.MongoClient(uri, serverSelectionTimeoutMS=15000)
        try:
            c.it_late.t.insert_one({"ok": 1})
            assert c.it_late.t.count_documents({}) == 1
            c.drop_database("it_late")
        finally:
            c.close()
    finally:
        rc = dg.stop()
        if fdb:
            fdb.stop()
    assert rc == 0, f"docguard exit code on SIGTERM: {rc}"
