"""The admin listener: bearer token, endpoints, and localhost by default."""

from __future__ import annotations

import json
import subprocess
import urllib.request

import pytest

import harness

pytestmark = pytest.mark.proxy


def _get(url: str, token: str | None = None) -> tuple[int, str]:
    req = urllib.request.Request(url)
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=3) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_admin_token_protects_everything_but_healthz(env, tmp_path):
    admin_port = harness.free_port()
    cfg = tmp_path / "admin.yaml"
    cfg.write_text(f"admin: {{ listen: 127.0.0.1:{admin_port}, token: s3cret }}\n")
    dg = harness.start_docguard(env.ferret_uri, tmp_path, config=cfg, extra_args=[])
    try:
        # The harness passes --admin, which overrides the file's listen address but keeps the token.
        base = f"http://127.0.0.1:{dg.ports['admin']}"
        assert _get(base + "/healthz")[0] == 200
        for path in ("/metrics", "/status", "/readyz"):
            assert _get(base + path)[0] == 401, path
            assert _get(base + path, "wrong")[0] == 401, path
            status, body = _get(base + path, "s3cret")
            assert status == 200, (path, body)
        assert json.loads(_get(base + "/status", "s3cret")[1])["mode"] in ("off", "warn", "block")
        assert _get(base + "/nope", "s3cret")[0] == 404
    finally:
        dg.stop()


def test_admin_listens_on_localhost_by_default():
    out = subprocess.run([str(harness.docguard_bin()), "--help"], capture_output=True, text=True,
                         timeout=10).stdout
    assert "--admin HOST:PORT" in out and "default 127.0.0.1:9216" in out


def _raw(port: int, request: bytes) -> bytes:
    """Sends `request` as it is and reads the whole answer (the listener closes after one)."""
    import socket
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(request)
        chunks = []
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


def test_admin_http_edges_over_a_socket(env, tmp_path):
    """What a browser, curl or a scanner may send: HEAD, a wrong method, a malformed or an
    oversized request, an unknown path, a Host that is not this listener. Each gets its status,
    and the listener stays up."""
    dg = harness.start_docguard(env.ferret_uri, tmp_path, extra_args=[])
    try:
        port = dg.ports["admin"]
        head = _raw(port, b"HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head
        assert b"Content-Length: 3" in head and head.endswith(b"\r\n\r\n"), head
        wrong = _raw(port, b"POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                           b"Content-Length: 0\r\n\r\n")
        assert wrong.startswith(b"HTTP/1.1 405") and b"Allow: GET, HEAD" in wrong, wrong
        get_start = _raw(port, b"GET /recording/start HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert get_start.startswith(b"HTTP/1.1 405") and b"Allow: POST" in get_start, get_start
        assert _raw(port, b"NOT HTTP AT ALL\r\n\r\n").startswith(b"HTTP/1.1 400")
        big = (b"POST /recording/start HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               b"Content-Length: 100000\r\n\r\n")
        assert _raw(port, big + b"{" * 5000).startswith(b"HTTP/1.1 400")
        huge_head = b"GET /status HTTP/1.1\r\nX-Pad: " + b"a" * 20000 + b"\r\n\r\n"
        assert _raw(port, huge_head).startswith(b"HTTP/1.1 400")
        missing = _raw(port, b"GET /nope HTTP/1.1\r\nHost: localhost\r\n\r\n")
        assert missing.startswith(b"HTTP/1.1 404"), missing
        # The 404 names every endpoint of the table, as --help does.
        usage = subprocess.run([str(harness.docguard_bin()), "--help"], capture_output=True,
                               text=True, timeout=10).stdout
        for path in ("/metrics", "/healthz", "/readyz", "/status", "/report", "/report.json",
                     "/recording", "/recording/start", "/recording/stop"):
            assert path.encode() in missing, path
            assert f" {path} " in usage, path
        # A name that is not this listener's (a page whose name was rebound to 127.0.0.1):
        # refused before anything else, the probes excepted.
        rebound = _raw(port, b"GET /status HTTP/1.1\r\nHost: x\r\n\r\n")
        assert rebound.startswith(b"HTTP/1.1 421"), rebound
        assert b"/recording" not in rebound, rebound  # not even the 404's list
        assert _raw(port, b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 421")
        assert _raw(port, b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n").split(b" ")[1] != b"421"
        assert _get(f"http://127.0.0.1:{port}/healthz")[0] == 200
    finally:
        dg.stop()
