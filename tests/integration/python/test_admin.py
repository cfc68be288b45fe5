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


def test_admin_token_protects_everything_but_the_probes(env, tmp_path):
    admin_port = harness.free_port()
    cfg = tmp_path / "admin.yaml"
    cfg.write_text(f"admin: {{ listen: 127.0.0.1:{admin_port}, token: s3cret }}\n")
    dg = harness.start_docguard(env.ferret_uri, tmp_path, config=cfg, extra_args=[])
    try:
        # The harness passes --admin, which overrides the file's listen address but keeps the token.
        base = f"http://127.0.0.1:{dg.ports['admin']}"
        assert _get(base + "/healthz")[0] == 200
        assert _get(base + "/readyz")[0] == 200  # a readiness probe sends no header
        for path in ("/metrics", "/status", "/report.json"):
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
        head = _raw(port, b"HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
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
        # refused before anything else, on every path (the probes too).
        rebound = _raw(port, b"GET /status HTTP/1.1\r\nHost: x\r\n\r\n")
        assert rebound.startswith(b"HTTP/1.1 421"), rebound
        assert b"/recording" not in rebound, rebound  # not even the 404's list
        assert _raw(port, b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 421")
        assert _raw(port, b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 421")
        assert _get(f"http://127.0.0.1:{port}/healthz")[0] == 200
    finally:
        dg.stop()


# ---------------------------------------------------------------- off loopback: token or opt-in

def _host_address() -> str:
    """An address of this host other hosts could reach it by (not loopback)."""
    import socket
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))  # no packet is sent: only the route is looked up
            address = s.getsockname()[0]
    except OSError:
        address = ""
    if not address or address.startswith("127."):
        pytest.skip("this host has no address but loopback")
    return address


def _request(address: str, port: int, path: str, *, token: str | None = None,
             host: str | None = None, origin: str | None = None) -> int:
    head = f"GET {path} HTTP/1.1\r\nHost: {host or f'{address}:{port}'}\r\n"
    if token is not None:
        head += f"Authorization: Bearer {token}\r\n"
    if origin is not None:
        head += f"Origin: {origin}\r\n"
    import socket
    with socket.create_connection((address, port), timeout=5) as s:
        s.sendall((head + "\r\n").encode())
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    return int(answer.split(b" ", 2)[1])


def _clean_env() -> dict:
    import os
    return {k: v for k, v in os.environ.items() if not k.startswith("DOCGUARD_ADMIN_TOKEN")}


def _spawn(args: list, log) -> subprocess.Popen:
    return subprocess.Popen([str(harness.docguard_bin())] + [str(a) for a in args],
                            stdout=log, stderr=subprocess.STDOUT, env=_clean_env())


def _wait_admin(proc: subprocess.Popen, address: str, port: int, token: str | None) -> None:
    import time
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert proc.poll() is None, "docguard exited"
        try:
            if _request(address, port, "/healthz") == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError("the admin listener never answered")


def _stop(proc: subprocess.Popen) -> None:
    import signal
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_an_admin_off_loopback_without_token_is_refused_unless_accepted(env, tmp_path):
    address = _host_address()
    port = harness.free_port()
    base = ["--listen", f"127.0.0.1:{harness.free_port()}", "--upstream", env.ferret_uri,
            "--admin", f"0.0.0.0:{port}"]
    refused = subprocess.run([str(harness.docguard_bin())] + base, capture_output=True,
                             text=True, timeout=20, env=_clean_env())
    assert refused.returncode == 1, refused
    for named in ("admin.listen", "0.0.0.0:" + str(port), "admin.token_file",
                  "admin.allow_without_token"):
        assert named in refused.stderr, refused.stderr
    # The operator's opt-in: it starts, says so once in the log and in /status.
    cfg = tmp_path / "open.yaml"
    cfg.write_text("admin: {allow_without_token: true}\n")
    log_path = tmp_path / "open.log"
    with open(log_path, "w") as log:
        proc = _spawn(base + ["--config", cfg], log)
    try:
        _wait_admin(proc, address, port, None)
        assert _request(address, port, "/metrics") == 200
        import urllib.request
        with urllib.request.urlopen(f"http://{address}:{port}/status", timeout=5) as r:
            admin = json.loads(r.read())["admin"]
        assert admin == {"listen": f"0.0.0.0:{port}", "token_required": False,
                         "open_without_token": True}, admin
    finally:
        _stop(proc)
    warnings = [line for line in log_path.read_text().splitlines() if "admin API on" in line]
    assert len(warnings) == 1 and "is open" in warnings[0], log_path.read_text()


def test_a_token_file_off_loopback_and_its_reload(env, tmp_path):
    """From another host's point of view (this host's own non-loopback address): the probes
    answer without a token, nothing else does; a foreign Host or Origin is refused; a rotated
    token file takes effect at SIGHUP; a reload that would open the listener, or from a file
    any user may write, is refused and the previous token stays."""
    import os
    import signal
    import time
    address = _host_address()
    port = harness.free_port()
    token_file = tmp_path / "admin-token"
    token_file.write_text("first-token\n")
    os.chmod(token_file, 0o600)
    cfg = tmp_path / "docguard.yaml"
    cfg.write_text(f"admin: {{token_file: {token_file}}}\n")
    log_path = tmp_path / "token.log"
    with open(log_path, "w") as log:
        proc = _spawn(["--listen", f"127.0.0.1:{harness.free_port()}", "--upstream",
                       env.ferret_uri, "--admin", f"0.0.0.0:{port}", "--config", cfg], log)
    try:
        _wait_admin(proc, address, port, None)
        assert _request(address, port, "/healthz") == 200
        deadline = time.monotonic() + 10
        while _request(address, port, "/readyz") != 200:  # open to the probe, once up
            assert time.monotonic() < deadline
            time.sleep(0.2)
        guarded = ("/metrics", "/status", "/report", "/report.json", "/recording", "/nope")
        for path in guarded:
            assert _request(address, port, path) == 401, path
            assert _request(address, port, path, token="wrong") == 401, path
        assert _request(address, port, "/status", token="first-token") == 200
        # A DNS-rebound page: refused on every path, the probes too, token or not.
        for path in guarded + ("/healthz", "/readyz"):
            assert _request(address, port, path, token="first-token",
                            host="attacker.example") == 421, path
        # Another site's page reading: refused on a GET too; the probes answer any Origin.
        for path in guarded:
            assert _request(address, port, path, token="first-token",
                            origin="http://evil.example") == 403, path
        assert _request(address, port, "/healthz", origin="http://evil.example") == 200

        def reload_and_wait(marker_count: int) -> str:
            """The reload's own log line (the marker_count-th that speaks of a reload)."""
            proc.send_signal(signal.SIGHUP)
            deadline = time.monotonic() + 10
            while True:
                lines = [x for x in log_path.read_text().splitlines() if "reload" in x]
                if len(lines) >= marker_count:
                    return lines[marker_count - 1]
                assert time.monotonic() < deadline, log_path.read_text()
                time.sleep(0.1)

        token_file.write_text("second-token\n")
        assert "reloaded" in reload_and_wait(1)
        assert _request(address, port, "/status", token="first-token") == 401
        assert _request(address, port, "/status", token="second-token") == 200
        # A reload that would leave the listener open without a token: refused.
        cfg.write_text("mode: warn\n")
        text = reload_and_wait(2)
        assert "failed" in text and "admin.allow_without_token" in text, text
        assert _request(address, port, "/status") == 401
        assert _request(address, port, "/status", token="second-token") == 200
        # A settings file any user may write: refused at reload too.
        cfg.write_text(f"admin: {{token_file: {token_file}}}\n")
        os.chmod(cfg, 0o646)
        text = reload_and_wait(3)
        assert "failed" in text and "writable by every user" in text, text
        whole_log = log_path.read_text()
        assert "second-token" not in whole_log and "first-token" not in whole_log  # never logged
        assert _request(address, port, "/status", token="second-token") == 200
    finally:
        _stop(proc)


def test_a_world_writable_settings_file_is_refused_at_start(tmp_path):
    import os
    cfg = tmp_path / "docguard.yaml"
    cfg.write_text("mode: warn\n")
    os.chmod(cfg, 0o666)
    r = subprocess.run([str(harness.docguard_bin()), "--config", str(cfg), "--listen",
                        f"127.0.0.1:{harness.free_port()}", "--admin",
                        f"127.0.0.1:{harness.free_port()}"],
                       capture_output=True, text=True, timeout=20, env=_clean_env())
    assert r.returncode == 1, r
    assert "writable by every user" in r.stderr and "chmod o-w" in r.stderr, r.stderr
