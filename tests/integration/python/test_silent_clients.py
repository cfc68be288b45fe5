"""Clients that never speak: they hold no upstream connection, they are closed at
limits.handshake_timeout, and at max_connections they make room for a client that speaks, so a
real driver connects while they wait."""

from __future__ import annotations

import socket
import time

import pymongo
import pytest

import harness

pytestmark = pytest.mark.proxy

SILENT = 100


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    work = tmp_path_factory.mktemp("silent")
    fdb = harness.start_ferretdb(work / "fdb")
    try:
        yield work, f"mongodb://127.0.0.1:{fdb.ports['listen']}"
    finally:
        fdb.stop()


def start(work, uri, limits: str):
    work.mkdir(parents=True, exist_ok=True)
    cfg = work / "docguard.yaml"
    cfg.write_text(f"limits: {{{limits}}}\n")
    return harness.start_docguard(uri, work, config=cfg)


def open_silent(port: int, n: int) -> list[socket.socket]:
    out = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        out.append(s)
    return out


def closed_by_peer(s: socket.socket, wait: float) -> bool:
    s.settimeout(wait)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
    except ConnectionError:
        return True


def upstream_connections(proc) -> float:
    samples = harness.fetch_metrics(f"127.0.0.1:{proc.ports['admin']}")
    return harness.metric_sum(samples, "docguard_upstream_connections")


def test_silent_clients_hold_no_upstream_and_are_closed(upstream):
    work, uri = upstream
    dg = start(work / "timeout", uri, "handshake_timeout: 2s")
    try:
        port = dg.ports["listen"]
        time.sleep(0.5)  # start_docguard's own readiness ping has gone
        before = upstream_connections(dg)
        silent = open_silent(port, SILENT)
        time.sleep(0.5)
        assert upstream_connections(dg) == before, "a silent client got an upstream connection"
        # A real driver meanwhile.
        with pymongo.MongoClient(f"mongodb://127.0.0.1:{port}", serverSelectionTimeoutMS=5000) as c:
            assert c.admin.command("ping")["ok"] == 1
        started = time.monotonic()
        assert all(closed_by_peer(s, 5.0) for s in silent)
        took = time.monotonic() - started
        assert took < 4.0, took
        samples = harness.fetch_metrics(f"127.0.0.1:{dg.ports['admin']}")
        assert harness.metric_sum(samples, "docguard_protocol_errors_total",
                                  kind="idle_timeout") >= SILENT
        for s in silent:
            s.close()
    finally:
        dg.stop()


def test_silent_clients_cannot_hold_max_connections(upstream):
    work, uri = upstream
    # A long handshake timeout: only eviction can admit the driver.
    dg = start(work / "full", uri, "handshake_timeout: 60s, max_connections: 5")
    try:
        port = dg.ports["listen"]
        time.sleep(0.5)
        silent = open_silent(port, 5)
        time.sleep(0.3)
        with pymongo.MongoClient(f"mongodb://127.0.0.1:{port}", serverSelectionTimeoutMS=5000,
                                 maxPoolSize=1) as c:
            assert c.admin.command("ping")["ok"] == 1
            assert c.test.items.count_documents({}) >= 0
        # The oldest silent ones made room.
        assert sum(closed_by_peer(s, 0.5) for s in silent) >= 1
        for s in silent:
            s.close()
    finally:
        dg.stop()


def test_a_client_that_speaks_is_not_closed_at_the_handshake_timeout(upstream):
    work, uri = upstream
    dg = start(work / "speaks", uri, "handshake_timeout: 1s")
    try:
        with pymongo.MongoClient(f"mongodb://127.0.0.1:{dg.ports['listen']}") as c:
            assert c.admin.command("ping")["ok"] == 1
            time.sleep(2.0)
            assert c.admin.command("ping")["ok"] == 1
    finally:
        dg.stop()


def test_clients_that_speak_without_credentials_cannot_hold_max_connections(tmp_path):
    """Against an upstream that requires authentication: five clients send one ping each and go
    quiet; a driver with credentials still connects (the oldest of them makes room)."""
    fdb = harness.start_ferretdb(tmp_path / "fdb", auth=True)
    try:
        uri = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
        dg = start(tmp_path / "auth", uri, "handshake_timeout: 60s, max_connections: 5")
        try:
            port = dg.ports["listen"]
            time.sleep(0.5)
            quiet = [harness.WireConnection(port) for _ in range(5)]
            for c in quiet:
                assert c.command({"ping": 1, "$db": "admin"})["ok"] == 1
            with pymongo.MongoClient(f"mongodb://127.0.0.1:{port}", username=harness.AUTH_USER,
                                     password=harness.AUTH_PASSWORD, maxPoolSize=1,
                                     serverSelectionTimeoutMS=5000) as c:
                assert c.admin.command("ping")["ok"] == 1
                assert c.test.items.count_documents({}) >= 0
            assert sum(closed_by_peer(c.sock, 0.5) for c in quiet) >= 1
            for c in quiet:
                c.close()
        finally:
            dg.stop()
    finally:
        fdb.stop()
