"""docguard-only behaviour in front of the replica-set double: no primary means an error
reply within serverSelectionTimeoutMS instead of a hang; /readyz, /status, the cluster metrics and
the log line per change follow the topology. Skipped unless DOCGUARD_CLUSTER_VIA=docguard."""

from __future__ import annotations

import json
import socket
import struct
import time

import bson
import pytest

import harness
import rs_double

pytestmark = pytest.mark.skipif(not harness.via_docguard(),
                                reason="docguard-only (DOCGUARD_CLUSTER_VIA=docguard)")


def _ask(port: int, doc: dict, request_id: int = 21, timeout: float = 10.0) -> tuple[dict, float]:
    t0 = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(rs_double._op_msg(request_id, 0, doc))
        buf = b""
        while len(buf) < 4 or len(buf) < struct.unpack_from("<i", buf)[0]:
            chunk = s.recv(65536)
            assert chunk, "connection closed without a reply"
            buf += chunk
    assert struct.unpack_from("<i", buf, 8)[0] == request_id
    return rs_double._op_msg_body(buf)[1], time.monotonic() - t0


def test_no_primary_error_then_recovery(double, targets):
    t = targets(double.uri(serverSelectionTimeoutMS=1500, heartbeatFrequencyMS=500))
    port, admin = t.proc.ports["listen"], f"127.0.0.1:{t.proc.ports['admin']}"
    harness.wait_for(lambda: harness.base.http_get(f"http://{admin}/readyz")[0] == 200, 10,
                     what="/readyz 200 with a primary")
    status = json.loads(harness.base.http_get(f"http://{admin}/status")[1])
    assert status["upstream"]["topology"]["primary"] == double.addresses[0], status["upstream"]
    assert "rs0" in status["upstream"]["uri"]
    reply, _ = _ask(port, {"ping": 1, "$db": "admin"})
    assert reply["ok"] == 1

    double.no_primary()
    harness.wait_for(lambda: harness.base.http_get(f"http://{admin}/readyz")[0] == 503, 10,
                     what="/readyz 503 without a primary")
    reply, secs = _ask(port, {"hello": 1, "$db": "admin"})
    assert (reply["ok"], reply["code"], reply["codeName"]) == (0, 133,
                                                               "FailedToSatisfyReadPreference")
    # (The topology type named may still be ReplicaSetWithPrimary: libmongoc's event after the
    # primary's demotion can carry the old type with no writable server.)
    assert "no writable server" in reply["errmsg"] and "(topology ReplicaSet" in reply["errmsg"]
    assert 1.0 < secs < 6, secs
    m = harness.base.fetch_metrics(admin)
    assert harness.base.metric_sum(m, "docguard_server_selection_failures_total") >= 1
    assert harness.base.metric_sum(m, "docguard_server_selection_waits_total") >= 1
    assert harness.base.metric_sum(m, "docguard_cluster_topology_type") == 1

    # A connection that starts waiting is served as soon as a primary is elected.
    def elect_soon():
        time.sleep(0.5)
        double.elect(2)

    import threading
    th = threading.Thread(target=elect_soon)
    th.start()
    reply, secs = _ask(port, {"ping": 1, "$db": "admin"})
    th.join()
    assert reply["ok"] == 1 and secs < 1.5, (reply, secs)
    assert double.status()["members"][2]["forwarded"].get("ping", 0) >= 1
    m = harness.base.fetch_metrics(admin)
    assert harness.base.metric_sum(m, "docguard_cluster_primary_changes_total") >= 1
    assert harness.base.metric_sum(m, "docguard_upstream_connections",
                                   server=double.addresses[2]) >= 0
    lines = [json.loads(ln) for ln in harness.base.read_log_lines(t.proc.log_path)
             if ln.startswith("{")]
    changes = [ln["msg"] for ln in lines if ln["msg"].startswith("upstream topology")]
    assert any(f"{double.addresses[0]} -> (none)" in c for c in changes), changes
    assert any(f"(none) -> {double.addresses[2]}" in c for c in changes), changes
    assert len(changes) == len(set(changes)) or len(changes) <= 6, changes
    # The password never reaches the log.
    assert all("secret" not in ln for ln in harness.base.read_log_lines(t.proc.log_path))


def test_hello_names_only_docguard(double, targets):
    t = targets(double.uri())
    port = t.proc.ports["listen"]
    hello, _ = _ask(port, {"hello": 1, "$db": "admin"})
    me = f"127.0.0.1:{port}"
    assert hello["hosts"] == [me] and hello["primary"] == me and hello["me"] == me
    assert hello["isWritablePrimary"] is True and "electionId" not in hello
    text = bson.encode(hello)
    for a in double.addresses:
        assert a.encode() not in text, f"hello leaks {a}"
